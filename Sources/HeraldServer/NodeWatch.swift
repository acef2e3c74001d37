import HeraldCore

/// When a node may judge others dead by their heartbeats: only once its own heartbeats
/// have gone through for a whole dead-after window. While the store cannot be reached (a
/// database failover) no node's heartbeat is written, so when it comes back every other
/// node's looks old at once; judging then would release the devices of nodes that are
/// alive and still hold their connections, and messages stored for those devices by other
/// nodes would wake nobody.
struct NodeWatch {
    let deadAfterMilliseconds: Int64
    /// Since when this node's heartbeats have gone through without a failure.
    private(set) var beatingSince: Timestamp?

    init(deadAfterMilliseconds: Int64, beatingSince: Timestamp? = nil) {
        self.deadAfterMilliseconds = deadAfterMilliseconds
        self.beatingSince = beatingSince
    }

    /// This node's heartbeat could not be written.
    mutating func heartbeatFailed() {
        beatingSince = nil
    }

    /// This node's heartbeat was written at `now`, and `stale` are the nodes whose last one
    /// is older than the window: answers those to release (none until this node's own
    /// heartbeats have gone through for the window, long enough for live nodes to write
    /// theirs).
    mutating func heartbeatWritten(now: Timestamp, stale: [String]) -> [String] {
        let since = beatingSince ?? now
        beatingSince = since
        return now.milliseconds - since.milliseconds >= deadAfterMilliseconds ? stale : []
    }
}
