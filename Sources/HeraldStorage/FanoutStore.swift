public import HeraldCore

/// Fanout jobs (a message to a topic, condition or group) and their pages, so that a
/// restart resumes after the last page stored.
///
/// Every method is a transaction of its own; a method that returns has made its change
/// durable.
public protocol FanoutStore: Sendable {
    /// Stores an accepted fanout message and its job, all or none.
    func createFanout(_ message: StoredMessage, job: FanoutJob, stats: [DeliveryStat]) async throws

    /// Jobs not yet done, oldest first.
    func unfinishedFanouts() async throws -> [FanoutJob]

    /// Queues one page of a fanout and moves its cursors (`firstDone` and `cursor`, see
    /// `FanoutJob`) in one transaction, so a restart resumes after the last page stored
    /// and no device gets a page twice.
    @discardableResult
    func storeFanoutPage(
        messageID: String, queue: [QueuedMessage], firstDone: Int, cursor: String, reached: Int, done: Bool,
        limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued]

    /// Marks a queued job running with the devices it reaches first; a job already
    /// running keeps the ones it has. Answers the job's first devices.
    func startFanout(messageID: String, firstDevices: [UInt64]) async throws -> [UInt64]

    /// The state of a message's fanout and how many app instances it reached so far; nil
    /// when the message has none.
    func fanoutProgress(messageID: String) async throws -> (state: FanoutJob.State, reached: Int)?
}
