import HeraldCore
import Testing

@testable import HeraldServer

/// When a node may judge others dead (`NodeWatch`).
@Suite struct NodeWatchTests {
    let start = Timestamp(milliseconds: 1_000_000)

    @Test func aNodeWhoseHeartbeatsGoThroughReleasesStaleNodesAtOnce() {
        var watch = NodeWatch(deadAfterMilliseconds: 5_000, beatingSince: start)
        #expect(watch.heartbeatWritten(now: start.adding(seconds: 1), stale: []) == [])
        #expect(watch.heartbeatWritten(now: start.adding(seconds: 6), stale: ["b"]) == ["b"])
    }

    @Test func afterTheStoreWasUnreachableNoNodeIsJudgedUntilAWholeWindowOfHeartbeatsWentThrough() {
        var watch = NodeWatch(deadAfterMilliseconds: 5_000, beatingSince: start)
        // A failover: 51 s without a heartbeat written, then every other node looks dead.
        watch.heartbeatFailed()
        let back = start.adding(seconds: 52)
        #expect(watch.heartbeatWritten(now: back, stale: ["b", "c"]) == [])
        #expect(watch.heartbeatWritten(now: back.adding(seconds: 4), stale: ["c"]) == [])
        // A node that stayed silent a whole window after the store came back is dead.
        #expect(watch.heartbeatWritten(now: back.adding(seconds: 5), stale: ["c"]) == ["c"])
    }

    @Test func aFailedHeartbeatInTheWindowStartsItAgain() {
        var watch = NodeWatch(deadAfterMilliseconds: 5_000)
        #expect(watch.heartbeatWritten(now: start, stale: ["b"]) == [])
        watch.heartbeatFailed()
        #expect(watch.heartbeatWritten(now: start.adding(seconds: 6), stale: ["b"]) == [])
        #expect(watch.heartbeatWritten(now: start.adding(seconds: 11), stale: ["b"]) == ["b"])
    }
}
