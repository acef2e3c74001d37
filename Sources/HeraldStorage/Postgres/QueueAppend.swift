import HeraldCore

/// One call of `PostgresStore.appendMessages`, as it waits for its batch.
struct QueueAppend: Sendable {
    var messages: [StoredMessage]
    var queue: [QueuedMessage]
    var limits: QueueLimits
    var stats: [DeliveryStat]
}
