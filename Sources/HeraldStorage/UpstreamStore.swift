public import HeraldCore

/// What waits for the projects' app servers: devices' upstream messages and delivery
/// receipts (`UpstreamMessage`), each kept until an app server acknowledges it or its time
/// to live runs out. An XMPP connection leases what it sends, so that two connections (on
/// any nodes) do not send the same message at once; a lease that runs out before the
/// acknowledgement makes the message sendable again.
///
/// Receipts are also made by `QueueStore.acknowledge`: acknowledging a queue entry that
/// carries a `receiptID` keeps its receipt in the same transaction: an XMPP delivery
/// receipt for a project's message, a `PushReceipt` under the receipt subscription the
/// `receiptID` names for a Web Push message (an entry of no project).
///
/// Every method is a transaction of its own; a method that returns has made its change durable.
public protocol UpstreamStore: Sendable {
    /// Keeps messages for the app servers. One whose project, kind, device token and
    /// message id match one kept already is left out (a device that sends again after a
    /// reconnect); answers how many were new.
    @discardableResult
    func appendUpstream(_ messages: [UpstreamMessage]) async throws -> Int

    /// Leases up to `limit` of a project's messages to `holder` until `until`, oldest
    /// first: those no lease holds at `now` and whose time to live has not run out.
    func leaseUpstream(projectID: String, holder: String, now: Timestamp, until: Timestamp, limit: Int)
        async throws -> [UpstreamMessage]

    /// Ends the leases of every holder whose name starts with `holderPrefix` (a closed
    /// connection, or a node that restarted), so that other connections send their
    /// messages at once.
    func releaseUpstream(holderPrefix: String) async throws

    /// Deletes what an app server acknowledged: the project's message with this id, from
    /// the device with `token` when it is given (receipts match by id alone). Answers
    /// whether one was kept.
    @discardableResult
    func acknowledgeUpstream(projectID: String, messageID: String, token: String?) async throws -> Bool

    /// Deletes up to `limit` messages whose time to live ran out by `now`, and answers them.
    func deleteExpiredUpstream(now: Timestamp, limit: Int) async throws -> [UpstreamMessage]

    /// How many messages a project keeps for its app servers.
    func upstreamCount(projectID: String) async throws -> Int

    /// What waits in one read, for the upstream limits: all a project keeps for its app
    /// servers, and the upstream messages (receipts left out) of one of its devices.
    func upstreamWaiting(projectID: String, androidID: UInt64) async throws -> (project: Int, device: Int)

    /// Keeps receipts of Web Push messages (a message handed to its device without being
    /// queued); one whose subscription, token and message id match one kept is left out.
    func appendPushReceipts(_ receipts: [PushReceipt]) async throws

    /// A receipt subscription's receipts, oldest first, up to `limit`, after deleting those
    /// whose sequence is at most `acknowledgedThrough` (the ones its sender has read).
    func pushReceipts(subscription: String, acknowledgedThrough: Int64, limit: Int) async throws -> [PushReceipt]

    /// Deletes up to `limit` push receipts whose time ran out by `now`; answers how many.
    func deleteExpiredPushReceipts(now: Timestamp, limit: Int) async throws -> Int
}
