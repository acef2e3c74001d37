import GRDB
public import HeraldCore

/// Sends scheduled for later (`ScheduleStore`). `ready_at` is when a send may next be
/// claimed: its due time while waiting, its lease's end while sending, none once ended.
extension SQLiteStore {
    static let scheduledColumns = """
        id, project_id, message_id, body, summary, due_at, created_by, created_at, state, attempts,
        leased_until, outcome
        """

    static func scheduledSend(_ row: ColumnReader) -> ScheduledSend {
        ScheduledSend(
            id: row.text(0), projectID: row.text(1), messageID: row.text(2), body: row.text(3), summary: row.text(4),
            dueAt: Timestamp(milliseconds: row.int64(5)), createdBy: row.text(6),
            createdAt: Timestamp(milliseconds: row.int64(7)),
            state: ScheduledSend.State(rawValue: row.text(8)) ?? .failed,
            attempts: Int(row.int64(9)), leasedUntil: Timestamp(milliseconds: row.int64(10)), outcome: row.text(11))
    }

    public func addScheduledSend(_ send: ScheduledSend) async throws {
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    INSERT INTO scheduled_sends (\(Self.scheduledColumns), ready_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    send.id, send.projectID, send.messageID, send.body, send.summary, send.dueAt.milliseconds,
                    send.createdBy, send.createdAt.milliseconds, send.state.rawValue, send.attempts,
                    send.leasedUntil.milliseconds, send.outcome, send.dueAt.milliseconds,
                ])
        }
    }

    public func scheduledSends(projectID: String, limit: Int) async throws -> [ScheduledSend] {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.scheduledColumns) FROM scheduled_sends WHERE project_id = ?
                    ORDER BY due_at DESC, id DESC LIMIT ?
                    """,
                arguments: [projectID, limit], Self.scheduledSend)
        }
    }

    public func cancelScheduledSend(projectID: String, id: String) async throws -> Bool {
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    UPDATE scheduled_sends SET state = 'cancelled', ready_at = NULL
                    WHERE id = ? AND project_id = ? AND state = 'waiting'
                    """,
                arguments: [id, projectID])
            return db.changesCount > 0
        }
    }

    public func nextClaimableSend() async throws -> Timestamp? {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT MIN(ready_at) FROM scheduled_sends WHERE ready_at IS NOT NULL").map {
                Timestamp(milliseconds: $0)
            }
        }
    }

    public func claimDueSends(now: Timestamp, until: Timestamp, limit: Int) async throws -> [ScheduledSend] {
        // Nothing due is the common answer: looked for without taking the writer.
        let any = try read { db in
            try Row.fetchOne(
                db, sql: "SELECT 1 FROM scheduled_sends WHERE ready_at <= ? LIMIT 1", arguments: [now.milliseconds])
                != nil
        }
        guard any else { return [] }
        return try await write(short: true) { db in
            try db.fetchAllCached(
                sql: """
                    UPDATE scheduled_sends
                    SET state = 'sending', attempts = attempts + 1, leased_until = ?, ready_at = ?
                    WHERE id IN (
                        SELECT id FROM scheduled_sends WHERE ready_at <= ? ORDER BY ready_at, id LIMIT ?)
                    RETURNING \(Self.scheduledColumns)
                    """,
                arguments: [until.milliseconds, until.milliseconds, now.milliseconds, limit], Self.scheduledSend
            ).sorted { ($0.dueAt, $0.id) < ($1.dueAt, $1.id) }
        }
    }

    public func finishScheduledSend(id: String, state: ScheduledSend.State, outcome: String) async throws -> Bool {
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    UPDATE scheduled_sends SET state = ?, outcome = ?, ready_at = NULL
                    WHERE id = ? AND state = 'sending'
                    """,
                arguments: [state.rawValue, outcome, id])
            return db.changesCount > 0
        }
    }
}
