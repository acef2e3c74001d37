public import HeraldCore

/// Delivery counters per project, day, app and analytics label (SEMANTICS L7), device
/// receipts, and the errors each project was answered with per hour.
///
/// Every method is a transaction of its own; a method that returns has made its change
/// durable.
public protocol StatsStore: Sendable {
    /// Adds to delivery counters.
    func record(_ stats: [DeliveryStat]) async throws

    /// Counts a device's receipt (`stat`, an impression or an open) of a stored message,
    /// unless that device's receipt of that kind was counted before; answers whether it
    /// counted. Receipts go with their message.
    func recordReceipt(_ stat: DeliveryStat, messageID: String, androidID: UInt64) async throws -> Bool

    /// How many devices' receipts of each kind (impressions, opens) a stored message has.
    func receiptCounts(messageID: String) async throws -> [DeliveryCounter: Int]

    /// A project's counters for days in `from...through`, with the messages of each key
    /// still queued; `appID` nil for every app.
    func deliveryReport(projectID: String, appID: String?, from: CalendarDay, through: CalendarDay) async throws
        -> [DeliveryReportRow]

    /// Adds to the counts of errors answered, per project, hour and code.
    func recordErrors(_ counts: [ErrorCount]) async throws

    /// A project's error counts of the hours from `since` on, oldest first.
    func errorCounts(projectID: String, since: Timestamp) async throws -> [ErrorCount]

    /// Deletes up to `limit` error counts of hours before `before`; answers how many.
    func deleteErrorCounts(before: Timestamp, limit: Int) async throws -> Int
}
