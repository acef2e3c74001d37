public import HeraldCore
public import HeraldStorage

/// What became of the entries of one batch of hand-offs, written in one go.
struct HandOffOutcome: Sendable {
    /// Entries the other service took, by device: acknowledged, as a device acknowledges.
    var delivered: [UInt64: [String]] = [:]
    /// Tokens the other service says are gone: their registrations are deleted.
    var unregistered: [String] = []
    /// Entries refused for good: withdrawn.
    var dropped: [QueuedMessage] = []
    /// Entries to try again, by when.
    var deferred: [Timestamp: [Int64]] = [:]

    mutating func merge(_ other: HandOffOutcome) {
        delivered.merge(other.delivered) { $0 + $1 }
        unregistered += other.unregistered
        dropped += other.dropped
        deferred.merge(other.deferred) { $0 + $1 }
    }
}
