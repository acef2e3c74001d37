public import HeraldCore

/// Projects' webhooks (`WebhookStore`).
extension InMemoryStore {
    public func addWebhook(_ webhook: Webhook) throws {
        guard project(id: webhook.projectID) != nil else { throw StoreError.notFound("project \(webhook.projectID)") }
        guard webhookRows[webhook.id] == nil else { throw StoreError.conflict("webhook \(webhook.id)") }
        webhookRows[webhook.id] = (webhook, "", StoreCoding.readyAt(webhook))
    }

    public func webhooks(projectID: String) -> [Webhook] {
        webhookRows.values.map(\.webhook).filter { $0.projectID == projectID }.sorted {
            ($0.createdAt, $0.id) < ($1.createdAt, $1.id)
        }
    }

    public func removeWebhook(projectID: String, id: String) -> Bool {
        guard webhookRows[id]?.webhook.projectID == projectID else { return false }
        webhookRows[id] = nil
        return true
    }

    public func claimDueWebhooks(now: Timestamp, until: Timestamp, holder: String, limit: Int) -> [Webhook] {
        let due = webhookRows.filter { _, row in
            ((row.readyAt ?? .max) <= now.milliseconds || (row.holder == holder && row.readyAt != nil))
                && (eventLog.last { $0.projectID == row.webhook.projectID }?.sequence ?? 0) > row.webhook.cursor
        }
        .sorted { ($0.value.readyAt ?? 0, $0.key) < ($1.value.readyAt ?? 0, $1.key) }.prefix(limit)
        return due.map { id, row in
            webhookRows[id] = (row.webhook, holder, until.milliseconds)
            return row.webhook
        }
    }

    public func saveWebhook(_ webhook: Webhook, holder: String, release: Bool) -> Bool {
        guard let row = webhookRows[webhook.id], row.holder == holder else { return false }
        webhookRows[webhook.id] =
            release ? (webhook, "", StoreCoding.readyAt(webhook)) : (webhook, holder, row.readyAt)
        return true
    }

    public func replaceWebhook(_ webhook: Webhook) -> Bool {
        guard webhookRows[webhook.id] != nil else { return false }
        webhookRows[webhook.id] = (webhook, "", StoreCoding.readyAt(webhook))
        return true
    }
}
