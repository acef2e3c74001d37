public import HeraldCore
import PostgresNIO

/// What became of every message (`EventStore`), and the writing of events and counts in
/// the statements of the facts they describe.
extension PostgresStore {
    /// Inserts events: a part of a statement, its values placed in `binds`.
    static func insertion(of events: [MessageEvent], _ binds: inout PostgresBindings) -> String {
        """
        INSERT INTO events (project_id, message_id, type, reason, app_id, token, label, node, at, target_kind, target,
            expires_at)
        SELECT * FROM UNNEST(\(binds.place(events.map(\.projectID)))::text[],
            \(binds.place(events.map(\.messageID)))::text[], \(binds.place(events.map(\.type.rawValue)))::text[],
            \(binds.place(events.map(\.reason)))::text[], \(binds.place(events.map(\.appID)))::text[],
            \(binds.place(events.map(\.token)))::text[], \(binds.place(events.map(\.analyticsLabel)))::text[],
            \(binds.place(events.map(\.node)))::text[], \(binds.place(events.map(\.at.milliseconds)))::bigint[],
            \(binds.place(events.map(\.targetKind)))::text[], \(binds.place(events.map(\.target)))::text[],
            \(binds.place(events.map(\.expiresAt.milliseconds)))::bigint[])
        """
    }

    /// Two parts of a `WITH` that write the events and counts of `stats`' facts, its values
    /// placed in `binds`. Counts are sorted, so that two writers take their rows' locks in
    /// one order.
    func eventWriting(_ stats: [DeliveryStat], _ binds: inout PostgresBindings) -> String {
        let now = SystemClock().now()
        let rows = EventRows(stats, node: nodeID, at: now)
        let counts = rows.counts.sorted {
            ($0.key.messageID, $0.key.type.rawValue) < ($1.key.messageID, $1.key.type.rawValue)
        }
        return """
            events_written AS (\(Self.insertion(of: rows.events, &binds))),
            counts_written AS (
                INSERT INTO message_counts (message_id, type, project_id, value, at)
                SELECT message_id, type, project_id, value, \(binds.place(now.milliseconds))
                FROM UNNEST(\(binds.place(counts.map(\.key.messageID)))::text[],
                    \(binds.place(counts.map(\.key.type.rawValue)))::text[],
                    \(binds.place(counts.map(\.key.projectID)))::text[],
                    \(binds.place(counts.map { Int64($0.value) }))::bigint[]) AS rows(message_id, type, project_id, value)
                ON CONFLICT (message_id, type) DO UPDATE SET value = message_counts.value + excluded.value)
            """
    }

    public func recordEvents(_ events: [MessageEvent]) async throws {
        guard !events.isEmpty else { return }
        var binds = PostgresBindings()
        let named = events.map { event -> MessageEvent in
            var event = event
            event.node = nodeID
            return event
        }
        try await run(PostgresQuery(unsafeSQL: Self.insertion(of: named, &binds), binds: binds), prepared: true)
        created([.events])
    }

    static let eventColumns = SQLiteStore.eventColumns

    static func event(_ row: PostgresRow) throws -> MessageEvent {
        let (sequence, type, reason, project, message, app, token, label, node, at, kind, target, expires) =
            try row.decode(
                (Int64, String, String, String, String, String, String, String, String, Int64, String, String, Int64)
                    .self)
        return MessageEvent(
            sequence: sequence, type: MessageEventType(rawValue: type) ?? .delivered, reason: reason,
            projectID: project,
            messageID: message, appID: app, token: token, analyticsLabel: label, node: node,
            at: Timestamp(milliseconds: at), targetKind: kind, target: target,
            expiresAt: Timestamp(milliseconds: expires))
    }

    public func events(projectID: String, after: Int64, limit: Int, filter: EventFilter) async throws
        -> [MessageEvent]
    {
        var binds = PostgresBindings()
        var conditions = ["project_id = \(binds.place(projectID))", "sequence > \(binds.place(after))"]
        if let messageID = filter.messageID { conditions.append("message_id = \(binds.place(messageID))") }
        if let label = filter.analyticsLabel { conditions.append("label = \(binds.place(label))") }
        if !filter.types.isEmpty {
            conditions.append("type = ANY(\(binds.place(filter.types.map(\.rawValue).sorted()))::text[])")
        }
        if let since = filter.since { conditions.append("at >= \(binds.place(since.milliseconds))") }
        if let until = filter.until { conditions.append("at < \(binds.place(until.milliseconds))") }
        let sql = """
            SELECT \(Self.eventColumns) FROM events WHERE \(conditions.joined(separator: " AND "))
            ORDER BY sequence LIMIT \(binds.place(Int64(limit)))
            """
        return try await rows(PostgresQuery(unsafeSQL: sql, binds: binds)).map(Self.event)
    }

    public func events(after: Int64, limit: Int) async throws -> [MessageEvent] {
        try await rows(
            """
            SELECT \(unescaped: Self.eventColumns) FROM events WHERE sequence > \(after)
            ORDER BY sequence LIMIT \(Int64(limit))
            """
        ).map(Self.event)
    }

    public func latestEventSequence() async throws -> Int64 {
        try await rows("SELECT COALESCE(MAX(sequence), 0) FROM events").first?.decode(Int64.self) ?? 0
    }

    /// Two seconds: a transaction that takes longer from numbering its events to
    /// committing may have them passed over by readers that were already past them.
    public var eventCommitLagMilliseconds: Int64 { 2_000 }

    public func messageStatus(projectID: String, messageID: String) async throws -> MessageStatus? {
        guard
            let accepted = try await rows(
                """
                SELECT \(unescaped: Self.eventColumns) FROM events
                WHERE message_id = \(messageID) AND type = 'accepted' AND project_id = \(projectID) LIMIT 1
                """
            ).first.map(Self.event)
        else { return nil }
        let events = try await rows("SELECT type, COUNT(*) FROM events WHERE message_id = \(messageID) GROUP BY type")
            .map { try $0.decode((String, Int).self) }
        let counts = try await rows("SELECT type, value FROM message_counts WHERE message_id = \(messageID)")
            .map { try $0.decode((String, Int).self) }
        let fanout = try await rows("SELECT state, delivered FROM fanouts WHERE message_id = \(messageID)")
            .first.map { try $0.decode((String, Int).self) }
        return EventRows.status(
            accepted: accepted, events: events, counts: counts, fanout: fanout.map { (state: $0.0, reached: $0.1) })
    }

    public func deleteEvents(before: Timestamp, limit: Int) async throws -> Int {
        let events = try await count(
            """
            DELETE FROM events WHERE sequence IN (
                SELECT sequence FROM (SELECT sequence, at FROM events ORDER BY sequence LIMIT \(limit)) AS oldest
                WHERE at < \(before.milliseconds))
            RETURNING 1
            """)
        let counts = try await count(
            """
            DELETE FROM message_counts WHERE (message_id, type) IN (
                SELECT message_id, type FROM message_counts WHERE at < \(before.milliseconds) LIMIT \(limit))
            RETURNING 1
            """)
        return events + counts
    }
}
