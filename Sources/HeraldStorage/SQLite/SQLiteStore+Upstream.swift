import GRDB
public import HeraldCore

/// Upstream messages and delivery receipts for app servers (`UpstreamStore`).
extension SQLiteStore {
    static let upstreamColumns =
        "sequence, project_id, kind, message_id, token, category, android_id, data, created_at, expires_at"

    static func upstream(_ row: ColumnReader) -> UpstreamMessage {
        UpstreamMessage(
            sequence: row.int64(0), projectID: row.text(1),
            kind: UpstreamMessage.Kind(rawValue: row.text(2)) ?? .message,
            messageID: row.text(3), token: row.text(4), category: row.text(5),
            androidID: UInt64(bitPattern: row.int64(6)), data: UpstreamMessage.data(fromJSON: row.text(7)),
            createdAt: Timestamp(milliseconds: row.int64(8)), expiresAt: Timestamp(milliseconds: row.int64(9)))
    }

    /// Inserts messages, leaving out those kept already; answers how many were new.
    static func insertUpstream(_ messages: [UpstreamMessage], _ db: Database) throws -> Int {
        var added = 0
        for message in messages {
            try db.executeCached(
                sql: """
                    INSERT OR IGNORE INTO upstream_messages
                        (project_id, kind, message_id, token, category, android_id, data, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    message.projectID, message.kind.rawValue, message.messageID, message.token, message.category,
                    Int64(bitPattern: message.androidID), message.kind == .message ? message.dataJSON : "",
                    message.createdAt.milliseconds, message.expiresAt.milliseconds,
                ])
            added += db.changesCount
        }
        return added
    }

    @discardableResult
    public func appendUpstream(_ messages: [UpstreamMessage]) async throws -> Int {
        guard !messages.isEmpty else { return 0 }
        return try await write(short: Self.isShort(messages.count)) { db in try Self.insertUpstream(messages, db) }
    }

    public func leaseUpstream(projectID: String, holder: String, now: Timestamp, until: Timestamp, limit: Int)
        async throws -> [UpstreamMessage]
    {
        // Nothing to lease is the common answer: looked for without taking the writer.
        let any = try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT 1 FROM upstream_messages WHERE project_id = ? AND leased_until <= ? AND expires_at > ?
                    LIMIT 1
                    """,
                arguments: [projectID, now.milliseconds, now.milliseconds]) != nil
        }
        guard any else { return [] }
        return try await write(short: true) { db in
            try db.fetchAllCached(
                sql: """
                    UPDATE upstream_messages SET holder = ?, leased_until = ?
                    WHERE sequence IN (
                        SELECT sequence FROM upstream_messages
                        WHERE project_id = ? AND leased_until <= ? AND expires_at > ?
                        ORDER BY sequence LIMIT ?)
                    RETURNING \(Self.upstreamColumns)
                    """,
                arguments: [holder, until.milliseconds, projectID, now.milliseconds, now.milliseconds, limit],
                Self.upstream
            ).sorted { $0.sequence < $1.sequence }
        }
    }

    public func releaseUpstream(holderPrefix: String) async throws {
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    UPDATE upstream_messages SET holder = '', leased_until = 0
                    WHERE holder != '' AND substr(holder, 1, length(?)) = ?
                    """,
                arguments: [holderPrefix, holderPrefix])
        }
    }

    @discardableResult
    public func acknowledgeUpstream(projectID: String, messageID: String, token: String?) async throws -> Bool {
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    DELETE FROM upstream_messages WHERE project_id = ? AND message_id = ?
                    AND (? IS NULL OR kind = 'receipt' OR token = ?)
                    """,
                arguments: [projectID, messageID, token, token])
            return db.changesCount > 0
        }
    }

    public func deleteExpiredUpstream(now: Timestamp, limit: Int) async throws -> [UpstreamMessage] {
        try await write { db in
            try db.fetchAllCached(
                sql: """
                    DELETE FROM upstream_messages WHERE sequence IN (
                        SELECT sequence FROM upstream_messages WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
                    RETURNING \(Self.upstreamColumns)
                    """,
                arguments: [now.milliseconds, limit], Self.upstream)
        }
    }

    public func upstreamCount(projectID: String) async throws -> Int {
        try read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM upstream_messages WHERE project_id = ?", arguments: [projectID]) ?? 0
        }
    }

    public func upstreamWaiting(projectID: String, androidID: UInt64) async throws -> (project: Int, device: Int) {
        try read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT (SELECT waiting FROM upstream_waiting WHERE project_id = ?),
                        (SELECT COUNT(*) FROM upstream_messages WHERE android_id = ? AND kind = 'message')
                    """, arguments: [projectID, Int64(bitPattern: androidID)])
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }
}
