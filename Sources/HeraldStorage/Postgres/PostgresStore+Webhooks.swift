public import HeraldCore
import PostgresNIO

/// Projects' webhooks (`WebhookStore`); a claim skips rows another node is claiming.
extension PostgresStore {
    static let webhookColumns = SQLiteStore.webhookColumns

    static func webhook(_ row: PostgresRow) throws -> Webhook {
        let (id, project, url, secret, types, state, cursor, failures, failingSince, next, errors, created) =
            try row.decode(
                (String, String, String, String, String, String, Int64, Int64, Int64?, Int64, String, Int64).self)
        return Webhook(
            id: id, projectID: project, url: url, secret: secret, types: StoreCoding.decodeTypes(types),
            state: Webhook.State(rawValue: state) ?? .paused, cursor: cursor, failures: Int(failures),
            failingSince: failingSince.map { Timestamp(milliseconds: $0) },
            nextAttemptAt: Timestamp(milliseconds: next),
            lastErrors: StoreCoding.decodeErrors(errors), createdAt: Timestamp(milliseconds: created))
    }

    public func addWebhook(_ webhook: Webhook) async throws {
        try await run(
            """
            INSERT INTO webhooks (\(unescaped: Self.webhookColumns), ready_at)
            VALUES (\(webhook.id), \(webhook.projectID), \(webhook.url), \(webhook.secret),
                \(StoreCoding.encode(types: webhook.types)), \(webhook.state.rawValue), \(webhook.cursor),
                \(Int64(webhook.failures)), \(webhook.failingSince?.milliseconds), \(webhook.nextAttemptAt.milliseconds),
                \(StoreCoding.encode(errors: webhook.lastErrors)), \(webhook.createdAt.milliseconds),
                \(StoreCoding.readyAt(webhook)))
            """)
    }

    public func webhooks(projectID: String) async throws -> [Webhook] {
        try await rows(
            """
            SELECT \(unescaped: Self.webhookColumns) FROM webhooks WHERE project_id = \(projectID)
            ORDER BY created_at, id
            """
        ).map(Self.webhook)
    }

    public func removeWebhook(projectID: String, id: String) async throws -> Bool {
        try await count("DELETE FROM webhooks WHERE project_id = \(projectID) AND id = \(id) RETURNING 1") > 0
    }

    public func claimDueWebhooks(now: Timestamp, until: Timestamp, holder: String, limit: Int) async throws
        -> [Webhook]
    {
        try await rows(
            """
            UPDATE webhooks SET holder = \(holder), ready_at = \(until.milliseconds)
            WHERE id IN (
                SELECT id FROM webhooks
                WHERE (ready_at <= \(now.milliseconds) OR (holder = \(holder) AND ready_at IS NOT NULL))
                    AND EXISTS (
                        SELECT 1 FROM events
                        WHERE events.project_id = webhooks.project_id AND events.sequence > webhooks.cursor)
                ORDER BY ready_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.webhookColumns)
            """, prepared: true
        ).map(Self.webhook)
    }

    public func saveWebhook(_ webhook: Webhook, holder: String, release: Bool) async throws -> Bool {
        try await update(webhook, holder: holder, release: release)
    }

    public func replaceWebhook(_ webhook: Webhook) async throws -> Bool {
        try await update(webhook, holder: nil, release: true)
    }

    /// Writes a webhook's progress: only while `holder` holds it, or whoever does for nil.
    func update(_ webhook: Webhook, holder: String?, release: Bool) async throws -> Bool {
        var binds = PostgresBindings()
        let sql = """
            UPDATE webhooks SET cursor = \(binds.place(webhook.cursor)), failures = \(binds.place(Int64(webhook.failures))),
                failing_since = \(webhook.failingSince.map { binds.place($0.milliseconds) } ?? "NULL"),
                next_attempt_at = \(binds.place(webhook.nextAttemptAt.milliseconds)),
                last_errors = \(binds.place(StoreCoding.encode(errors: webhook.lastErrors))),
                state = \(binds.place(webhook.state.rawValue))
                \(release ? ", holder = '', ready_at = \(StoreCoding.readyAt(webhook).map { binds.place($0) } ?? "NULL")" : "")
            WHERE id = \(binds.place(webhook.id)) \(holder.map { "AND holder = \(binds.place($0))" } ?? "")
            RETURNING 1
            """
        return try await rows(PostgresQuery(unsafeSQL: sql, binds: binds)).count > 0
    }
}
