/// What joining a queue entry means for a store: one place that turns a `QueuePolicy`
/// decision into rows to delete, rows to insert and counters to add, for every backend.
struct QueueAdmission {
    var decision: QueuePolicy.Decision
    /// Entries to insert, in order: the message, then any "messages deleted" signal.
    var inserts: [QueuedMessage] = []
    /// Counters for what the decision collapsed or dropped.
    var stats: [DeliveryStat] = []

    /// How `entry` joins an app instance's queue, which holds `current`.
    init(_ entry: QueuedMessage, current: [QueuedMessage], limits: QueueLimits) {
        let policyEntries = current.map {
            QueuePolicy.Entry(
                sequence: $0.sequence, collapseKey: $0.collapseKey, isDeletionSignal: $0.deletedCount > 0,
                deletedCount: $0.deletedCount)
        }
        decision =
            entry.deletedCount > 0
            ? QueuePolicy.admitDiscarded(count: entry.deletedCount, into: policyEntries)
            : QueuePolicy.admit(
                collapseKey: entry.collapseKey, into: policyEntries, maximumPending: limits.maximumPending,
                maximumCollapseKeys: limits.maximumCollapseKeys)
        let deleted = current.filter { decision.delete.contains($0.sequence) && $0.deletedCount == 0 }
        stats = deleted.map { dropped in
            let collapsed = entry.collapseKey != nil && dropped.collapseKey == entry.collapseKey
            return dropped.stat(collapsed ? .collapsed : .droppedTooManyPending)
        }
        if decision.store {
            var stored = entry
            stored.deletionSignalStanza = []
            inserts.append(stored)
        } else if entry.deletedCount == 0 {
            stats.append(entry.stat(.droppedTooManyPending))
        }
        if let count = decision.deletionSignal {
            var signal = entry
            signal.persistentID = "deleted:" + SecureRandom.hex(bytes: 8)
            signal.stanza = entry.deletionSignalStanza
            signal.deletionSignalStanza = []
            signal.collapseKey = nil
            signal.isHighPriority = true
            signal.deletedCount = count
            signal.expiresAt = entry.createdAt.adding(seconds: QueuedMessage.deletionSignalLifetimeSeconds)
            inserts.append(signal)
        }
    }
}
