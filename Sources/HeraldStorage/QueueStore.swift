public import HeraldCore

/// Accepted messages and the devices' queues: appending with the queue rules (D1, D2),
/// reading a device's pending messages, acknowledgements and expiry.
///
/// Every method is a transaction of its own; a method that returns has made its change
/// durable.
public protocol QueueStore: Sendable {
    /// Stores accepted messages and the device-queue entries that deliver them, durably,
    /// all or none, and adds `stats` to the delivery counters in the same transaction.
    /// Each entry joins its app instance's queue as `QueuePolicy` decides with `limits`;
    /// the outcomes come back in entry order, and what they collapse or drop is counted.
    @discardableResult
    func appendMessages(
        _ messages: [StoredMessage], queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued]

    /// The stored message with this id.
    func message(id: String) async throws -> StoredMessage?

    /// How many messages a project has stored.
    func messageCount(projectID: String) async throws -> Int

    /// Up to `limit` queued messages of a device after a sequence number, oldest first,
    /// leaving out those expired at `now`.
    func pendingMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp) async throws
        -> [QueuedMessage]

    /// Up to `limit` high-priority queued messages (and deletion signals) of a device after
    /// a sequence number, for a dozing device (SEMANTICS D4).
    func pendingHighPriorityMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        async throws -> [QueuedMessage]

    /// Removes acknowledged messages from a device's queue, counting them delivered;
    /// answers how many were removed.
    @discardableResult
    func acknowledge(androidID: UInt64, persistentIDs: [String]) async throws -> Int

    /// Deletes an undelivered queue entry its sender withdrew (RFC 8030 §6.2), counting
    /// nothing; answers whether it was there.
    func withdraw(androidID: UInt64, persistentID: String) async throws -> Bool

    /// Acknowledges messages of many devices in one transaction (the gateway's group
    /// commit); answers how many entries were removed.
    @discardableResult
    func acknowledge(batch: [UInt64: [String]]) async throws -> Int

    /// Deletes up to `limit` queue entries whose time to live has passed, counting them
    /// expired (SEMANTICS D5), and up to `limit` message records past their time to live,
    /// so that the store does not grow without end; answers how many queue entries were deleted.
    func deleteExpired(now: Timestamp, limit: Int) async throws -> Int

    /// How many messages wait in a device's queue, expired ones included.
    func queuedCount(androidID: UInt64) async throws -> Int
}
