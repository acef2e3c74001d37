import GRDB
public import HeraldCore

/// Projects' webhooks (`WebhookStore`).
extension SQLiteStore {
    static let webhookColumns = """
        id, project_id, url, secret, types, state, cursor, failures, failing_since, next_attempt_at, last_errors, \
        created_at
        """

    static func webhook(_ row: ColumnReader) -> Webhook {
        Webhook(
            id: row.text(0), projectID: row.text(1), url: row.text(2), secret: row.text(3),
            types: StoreCoding.decodeTypes(row.text(4)), state: Webhook.State(rawValue: row.text(5)) ?? .paused,
            cursor: row.int64(6), failures: Int(row.int64(7)),
            failingSince: row.optionalInt64(8).map { Timestamp(milliseconds: $0) },
            nextAttemptAt: Timestamp(milliseconds: row.int64(9)), lastErrors: StoreCoding.decodeErrors(row.text(10)),
            createdAt: Timestamp(milliseconds: row.int64(11)))
    }

    public func addWebhook(_ webhook: Webhook) async throws {
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    INSERT INTO webhooks (\(Self.webhookColumns), ready_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    webhook.id, webhook.projectID, webhook.url, webhook.secret,
                    StoreCoding.encode(types: webhook.types),
                    webhook.state.rawValue, webhook.cursor, webhook.failures, webhook.failingSince?.milliseconds,
                    webhook.nextAttemptAt.milliseconds, StoreCoding.encode(errors: webhook.lastErrors),
                    webhook.createdAt.milliseconds, StoreCoding.readyAt(webhook),
                ])
        }
    }

    public func webhooks(projectID: String) async throws -> [Webhook] {
        try read { db in
            try db.fetchAllCached(
                sql: "SELECT \(Self.webhookColumns) FROM webhooks WHERE project_id = ? ORDER BY created_at, id",
                arguments: [projectID], Self.webhook)
        }
    }

    public func removeWebhook(projectID: String, id: String) async throws -> Bool {
        try await write(short: true) { db in
            try db.executeCached(
                sql: "DELETE FROM webhooks WHERE project_id = ? AND id = ?", arguments: [projectID, id])
            return db.changesCount > 0
        }
    }

    public func claimDueWebhooks(now: Timestamp, until: Timestamp, holder: String, limit: Int) async throws
        -> [Webhook]
    {
        // Nothing due is the common answer: looked for without taking the writer.
        let any = try read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT 1 FROM webhooks WHERE \(Self.due) LIMIT 1", arguments: [now.milliseconds, holder]) != nil
        }
        guard any else { return [] }
        return try await write(short: true) { db in
            try db.fetchAllCached(
                sql: """
                    UPDATE webhooks SET holder = ?, ready_at = ?
                    WHERE id IN (
                        SELECT id FROM webhooks WHERE \(Self.due) ORDER BY ready_at, id LIMIT ?)
                    RETURNING \(Self.webhookColumns)
                    """,
                arguments: [holder, until.milliseconds, now.milliseconds, holder, limit], Self.webhook)
        }
    }

    /// A webhook to claim: due (or held by the claimer; its two `?` are now and the holder),
    /// with events after its cursor. An idle webhook is not claimed, so it costs no write.
    static let due = """
        (ready_at <= ? OR (holder = ? AND ready_at IS NOT NULL))
        AND EXISTS (SELECT 1 FROM events WHERE events.project_id = webhooks.project_id AND events.sequence > webhooks.cursor)
        """

    public func saveWebhook(_ webhook: Webhook, holder: String, release: Bool) async throws -> Bool {
        try await write(short: true) { db in
            try Self.update(webhook, db, holder: holder, release: release)
        }
    }

    public func replaceWebhook(_ webhook: Webhook) async throws -> Bool {
        try await write(short: true) { db in try Self.update(webhook, db, holder: nil, release: true) }
    }

    /// Writes a webhook's progress: only while `holder` holds it, or whoever does for nil.
    static func update(_ webhook: Webhook, _ db: Database, holder: String?, release: Bool) throws -> Bool {
        try db.execute(
            sql: """
                UPDATE webhooks SET cursor = ?, failures = ?, failing_since = ?, next_attempt_at = ?, last_errors = ?,
                    state = ?\(release ? ", holder = '', ready_at = ?" : "")
                WHERE id = ?\(holder == nil ? "" : " AND holder = ?")
                """,
            arguments: StatementArguments(
                [
                    webhook.cursor, webhook.failures, webhook.failingSince?.milliseconds,
                    webhook.nextAttemptAt.milliseconds, StoreCoding.encode(errors: webhook.lastErrors),
                    webhook.state.rawValue,
                ] + (release ? [StoreCoding.readyAt(webhook)] : []) + [webhook.id]
                    + (holder.map { [$0] } ?? []) as [(any DatabaseValueConvertible)?]))
        return db.changesCount > 0
    }
}
