public import HeraldCore

/// Sends scheduled for later, shared by every node: each is claimed by one node at a
/// time, under a lease that another node may take over once it has run out.
///
/// Every method is a transaction of its own; a method that returns has made its change durable.
public protocol ScheduleStore: Sendable {
    /// Keeps a new scheduled send.
    func addScheduledSend(_ send: ScheduledSend) async throws

    /// Up to `limit` of a project's scheduled sends, the latest due first.
    func scheduledSends(projectID: String, limit: Int) async throws -> [ScheduledSend]

    /// Cancels a send of the project that is still waiting; answers whether it was.
    func cancelScheduledSend(projectID: String, id: String) async throws -> Bool

    /// Claims up to `limit` sends, earliest due first, that are due by `now` and waiting, or
    /// whose claim ran out by `now`: each becomes `sending`, leased until `until`, with one
    /// more attempt. No two callers claim the same send while its lease lasts.
    func claimDueSends(now: Timestamp, until: Timestamp, limit: Int) async throws -> [ScheduledSend]

    /// When the next send may be claimed: the earliest due time of those waiting, or end of
    /// lease of those being sent; nil when none is either.
    func nextClaimableSend() async throws -> Timestamp?

    /// Ends a claimed send as `sent` or `failed` with its outcome; a send no longer being
    /// sent is left as it is. Answers whether it changed.
    @discardableResult
    func finishScheduledSend(id: String, state: ScheduledSend.State, outcome: String) async throws -> Bool
}
