import GRDB
import GRDBSQLite
public import HeraldCore

/// What became of every message (`EventStore`), and the writing of events and counts in
/// the transactions of the facts they describe.
extension SQLiteStore {
    /// Writes the events and counts of `stats`' facts.
    func recordEvents(_ stats: [DeliveryStat], _ db: Database) throws {
        guard stats.contains(where: { $0.fact != nil }) else { return }
        let now = SystemClock().now()
        let rows = EventRows(stats, node: nodeID, at: now)
        for event in rows.events { try insert(event, db) }
        for (count, value) in rows.counts {
            try db.executeCached(
                sql: """
                    INSERT INTO message_counts (message_id, type, project_id, value, at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (message_id, type) DO UPDATE SET value = value + excluded.value
                    """,
                arguments: [count.messageID, count.type.rawValue, count.projectID, value, now.milliseconds])
        }
    }

    public func recordEvents(_ events: [MessageEvent]) async throws {
        guard !events.isEmpty else { return }
        let node = nodeID
        try await write(short: Self.isShort(events.count)) { db in
            for var event in events {
                event.node = node
                try self.insert(event, db)
            }
        }
    }

    /// Writes a stored message's `accepted` event.
    func recordAccepted(_ message: StoredMessage, _ db: Database) throws {
        if let event = EventRows.accepted(message, node: nodeID) { try insert(event, db) }
    }

    /// Inserts an event in the writer's transaction, whose commit wakes the event streams.
    func insert(_ event: MessageEvent, _ db: Database) throws {
        workObserver.note(.events)
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO events (project_id, message_id, type, reason, app_id, token, label, node, at, target_kind,
                    target, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        _ = try statement.insert { handle in
            Self.bindText(handle, 1, event.projectID)
            Self.bindText(handle, 2, event.messageID)
            Self.bindText(handle, 3, event.type.rawValue)
            Self.bindText(handle, 4, event.reason)
            Self.bindText(handle, 5, event.appID)
            Self.bindText(handle, 6, event.token)
            Self.bindText(handle, 7, event.analyticsLabel)
            Self.bindText(handle, 8, event.node)
            sqlite3_bind_int64(handle, 9, event.at.milliseconds)
            Self.bindText(handle, 10, event.targetKind)
            Self.bindText(handle, 11, event.target)
            sqlite3_bind_int64(handle, 12, event.expiresAt.milliseconds)
        }
    }

    static let eventColumns = """
        sequence, type, reason, project_id, message_id, app_id, token, label, node, at, target_kind, target, expires_at
        """

    static func event(_ row: ColumnReader) -> MessageEvent {
        MessageEvent(
            sequence: row.int64(0), type: MessageEventType(rawValue: row.text(1)) ?? .delivered, reason: row.text(2),
            projectID: row.text(3), messageID: row.text(4), appID: row.text(5), token: row.text(6),
            analyticsLabel: row.text(7), node: row.text(8), at: Timestamp(milliseconds: row.int64(9)),
            targetKind: row.text(10), target: row.text(11), expiresAt: Timestamp(milliseconds: row.int64(12)))
    }

    public func events(projectID: String, after: Int64, limit: Int, filter: EventFilter) async throws
        -> [MessageEvent]
    {
        var conditions = ["project_id = ?", "sequence > ?"]
        var arguments: [any DatabaseValueConvertible] = [projectID, after]
        if let messageID = filter.messageID {
            conditions.append("message_id = ?")
            arguments.append(messageID)
        }
        if let label = filter.analyticsLabel {
            conditions.append("label = ?")
            arguments.append(label)
        }
        if !filter.types.isEmpty {
            let types = filter.types.map(\.rawValue).sorted()
            conditions.append("type IN (\(types.map { _ in "?" }.joined(separator: ", ")))")
            arguments += types as [any DatabaseValueConvertible]
        }
        if let since = filter.since {
            conditions.append("at >= ?")
            arguments.append(since.milliseconds)
        }
        if let until = filter.until {
            conditions.append("at < ?")
            arguments.append(until.milliseconds)
        }
        arguments.append(limit)
        // A message's events are found through their message, the rest through the project.
        let index = filter.messageID == nil ? "events_project" : "events_message"
        return try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.eventColumns) FROM events INDEXED BY \(index)
                    WHERE \(conditions.joined(separator: " AND ")) ORDER BY sequence LIMIT ?
                    """,
                arguments: StatementArguments(arguments), Self.event)
        }
    }

    public func events(after: Int64, limit: Int) async throws -> [MessageEvent] {
        try read { db in
            try db.fetchAllCached(
                sql: "SELECT \(Self.eventColumns) FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?",
                arguments: [after, limit], Self.event)
        }
    }

    public func latestEventSequence() async throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT MAX(sequence) FROM events") ?? 0 }
    }

    public var eventCommitLagMilliseconds: Int64 { 0 }

    public func messageStatus(projectID: String, messageID: String) async throws -> MessageStatus? {
        try read { db in
            guard
                let accepted = try db.fetchAllCached(
                    sql: """
                        SELECT \(Self.eventColumns) FROM events
                        WHERE message_id = ? AND type = 'accepted' AND project_id = ? LIMIT 1
                        """,
                    arguments: [messageID, projectID], Self.event
                ).first
            else { return nil }
            let events = try db.fetchAllCached(
                sql: "SELECT type, COUNT(*) FROM events WHERE message_id = ? GROUP BY type", arguments: [messageID]
            ) { row in (row.text(0), Int(row.int64(1))) }
            let counts = try db.fetchAllCached(
                sql: "SELECT type, value FROM message_counts WHERE message_id = ?", arguments: [messageID]
            ) { row in (row.text(0), Int(row.int64(1))) }
            let fanout = try db.fetchAllCached(
                sql: "SELECT state, delivered FROM fanouts WHERE message_id = ?", arguments: [messageID]
            ) { row in (state: row.text(0), reached: Int(row.int64(1))) }.first
            return EventRows.status(accepted: accepted, events: events, counts: counts, fanout: fanout)
        }
    }

    public func deleteEvents(before: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: """
                    DELETE FROM events WHERE sequence IN (
                        SELECT sequence FROM (SELECT sequence, at FROM events ORDER BY sequence LIMIT ?) WHERE at < ?)
                    """,
                arguments: [limit, before.milliseconds])
            let events = db.changesCount
            try db.executeCached(
                sql: """
                    DELETE FROM message_counts WHERE (message_id, type) IN
                        (SELECT message_id, type FROM message_counts WHERE at < ? LIMIT ?)
                    """,
                arguments: [before.milliseconds, limit])
            return events + db.changesCount
        }
    }
}
