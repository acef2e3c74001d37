import GRDB
public import HeraldCore

/// Receipts of Web Push messages waiting for their senders (`UpstreamStore`).
extension SQLiteStore {
    static func insertPushReceipts(_ receipts: [PushReceipt], _ db: Database) throws {
        for receipt in receipts {
            try db.executeCached(
                sql: """
                    INSERT OR IGNORE INTO push_receipts (subscription, token, message_id, acknowledged_at, expires_at)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    receipt.subscription, receipt.token, receipt.messageID, receipt.acknowledgedAt.milliseconds,
                    receipt.expiresAt.milliseconds,
                ])
        }
    }

    public func appendPushReceipts(_ receipts: [PushReceipt]) async throws {
        guard !receipts.isEmpty else { return }
        try await write(short: true) { db in try Self.insertPushReceipts(receipts, db) }
    }

    static func pushReceipts(subscription: String, after sequence: Int64, limit: Int, _ db: Database) throws
        -> [PushReceipt]
    {
        try db.fetchAllCached(
            sql: """
                SELECT sequence, token, message_id, acknowledged_at, expires_at FROM push_receipts
                WHERE subscription = ? AND sequence > ? ORDER BY sequence LIMIT ?
                """,
            arguments: [subscription, sequence, limit]
        ) { row in
            PushReceipt(
                sequence: row.int64(0), subscription: subscription, token: row.text(1), messageID: row.text(2),
                acknowledgedAt: Timestamp(milliseconds: row.int64(3)), expiresAt: Timestamp(milliseconds: row.int64(4)))
        }
    }

    public func pushReceipts(subscription: String, acknowledgedThrough: Int64, limit: Int) async throws
        -> [PushReceipt]
    {
        // A sender that has read nothing yet (or polls an empty subscription) writes nothing.
        guard acknowledgedThrough > 0 else {
            return try read { db in try Self.pushReceipts(subscription: subscription, after: 0, limit: limit, db) }
        }
        return try await write(short: true) { db in
            try db.executeCached(
                sql: "DELETE FROM push_receipts WHERE subscription = ? AND sequence <= ?",
                arguments: [subscription, acknowledgedThrough])
            return try Self.pushReceipts(subscription: subscription, after: acknowledgedThrough, limit: limit, db)
        }
    }

    public func deleteExpiredPushReceipts(now: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: """
                    DELETE FROM push_receipts WHERE sequence IN (
                        SELECT sequence FROM push_receipts WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
                    """,
                arguments: [now.milliseconds, limit])
            return db.changesCount
        }
    }
}
