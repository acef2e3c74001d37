public import HeraldCore

/// Projects' webhooks (SEMANTICS E5), shared by every node: each is claimed by one node at
/// a time, under a lease another node takes over once it has run out. Their outbox is the
/// event log itself: a webhook keeps the sequence number of the last event it took.
///
/// Every method is a transaction of its own; a method that returns has made its change durable.
public protocol WebhookStore: Sendable {
    /// Keeps a new webhook.
    func addWebhook(_ webhook: Webhook) async throws

    /// A project's webhooks, oldest first.
    func webhooks(projectID: String) async throws -> [Webhook]

    /// Removes a project's webhook; answers whether it was there.
    func removeWebhook(projectID: String, id: String) async throws -> Bool

    /// Claims up to `limit` active webhooks with events after their cursor, due by `now`, whose
    /// lease (if any) ran out, or that `holder` itself held (a node claims again what it held
    /// before it restarted), for
    /// `holder` until `until`. No two holders claim one webhook while its lease lasts; a
    /// holder claims again only after it has released what it claimed before.
    func claimDueWebhooks(now: Timestamp, until: Timestamp, holder: String, limit: Int) async throws -> [Webhook]

    /// Writes a claimed webhook's progress (cursor, failures, errors, state, next attempt)
    /// while `holder` still holds it; with `release`, its lease ends and it is due again at
    /// its next attempt (a paused one never). Answers whether `holder` held it.
    @discardableResult
    func saveWebhook(_ webhook: Webhook, holder: String, release: Bool) async throws -> Bool

    /// Writes a webhook an operator changed (resumed), whoever holds it.
    @discardableResult
    func replaceWebhook(_ webhook: Webhook) async throws -> Bool
}
