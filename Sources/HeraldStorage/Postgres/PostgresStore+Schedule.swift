public import HeraldCore
import PostgresNIO

/// Sends scheduled for later (`ScheduleStore`). `ready_at` is when a send may next be
/// claimed: its due time while waiting, its lease's end while sending, none once ended.
extension PostgresStore {
    static func scheduledSend(_ row: PostgresRow) throws -> ScheduledSend {
        let (id, project, message, body, summary, due, by, created, state, attempts, leased, outcome) =
            try row.decode(
                (String, String, String, String, String, Int64, String, Int64, String, Int32, Int64, String).self)
        return ScheduledSend(
            id: id, projectID: project, messageID: message, body: body, summary: summary,
            dueAt: Timestamp(milliseconds: due), createdBy: by, createdAt: Timestamp(milliseconds: created),
            state: ScheduledSend.State(rawValue: state) ?? .failed, attempts: Int(attempts),
            leasedUntil: Timestamp(milliseconds: leased), outcome: outcome)
    }

    public func addScheduledSend(_ send: ScheduledSend) async throws {
        try await run(
            """
            INSERT INTO scheduled_sends (id, project_id, message_id, body, summary, due_at, created_by, created_at,
                state, attempts, leased_until, outcome, ready_at)
            VALUES (\(send.id), \(send.projectID), \(send.messageID), \(send.body), \(send.summary),
                \(send.dueAt.milliseconds), \(send.createdBy), \(send.createdAt.milliseconds), \(send.state.rawValue),
                \(Int32(send.attempts)), \(send.leasedUntil.milliseconds), \(send.outcome), \(send.dueAt.milliseconds))
            """)
    }

    public func scheduledSends(projectID: String, limit: Int) async throws -> [ScheduledSend] {
        try await rows(
            """
            SELECT \(unescaped: Self.scheduledColumns) FROM scheduled_sends WHERE project_id = \(projectID)
            ORDER BY due_at DESC, id DESC LIMIT \(limit)
            """
        ).map(Self.scheduledSend)
    }

    public func cancelScheduledSend(projectID: String, id: String) async throws -> Bool {
        try await count(
            """
            UPDATE scheduled_sends SET state = 'cancelled', ready_at = NULL
            WHERE id = \(id) AND project_id = \(projectID) AND state = 'waiting'
            RETURNING 1
            """) > 0
    }

    public func claimDueSends(now: Timestamp, until: Timestamp, limit: Int) async throws -> [ScheduledSend] {
        try await rows(
            """
            UPDATE scheduled_sends
            SET state = 'sending', attempts = attempts + 1, leased_until = \(until.milliseconds),
                ready_at = \(until.milliseconds)
            WHERE id IN (
                SELECT id FROM scheduled_sends WHERE ready_at <= \(now.milliseconds)
                ORDER BY ready_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.scheduledColumns)
            """, prepared: true
        ).map(Self.scheduledSend).sorted { ($0.dueAt, $0.id) < ($1.dueAt, $1.id) }
    }

    public func nextClaimableSend() async throws -> Timestamp? {
        try await rows("SELECT MIN(ready_at) FROM scheduled_sends WHERE ready_at IS NOT NULL").first?.decode(
            Int64?.self
        ).map {
            Timestamp(milliseconds: $0)
        }
    }

    public func finishScheduledSend(id: String, state: ScheduledSend.State, outcome: String) async throws -> Bool {
        try await count(
            """
            UPDATE scheduled_sends SET state = \(state.rawValue), outcome = \(outcome), ready_at = NULL
            WHERE id = \(id) AND state = 'sending'
            RETURNING 1
            """) > 0
    }

    static let scheduledColumns = """
        id, project_id, message_id, body, summary, due_at, created_by, created_at, state, attempts,
        leased_until, outcome
        """
}
