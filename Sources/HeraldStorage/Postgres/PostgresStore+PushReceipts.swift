public import HeraldCore
import PostgresNIO

/// Receipts of Web Push messages waiting for their senders (`UpstreamStore`).
extension PostgresStore {
    public func appendPushReceipts(_ receipts: [PushReceipt]) async throws {
        guard !receipts.isEmpty else { return }
        try await run(
            """
            INSERT INTO push_receipts (subscription, token, message_id, acknowledged_at, expires_at)
            SELECT * FROM UNNEST(\(receipts.map(\.subscription))::text[], \(receipts.map(\.token))::text[],
                \(receipts.map(\.messageID))::text[], \(receipts.map(\.acknowledgedAt.milliseconds))::bigint[],
                \(receipts.map(\.expiresAt.milliseconds))::bigint[])
            ON CONFLICT DO NOTHING
            """)
    }

    public func pushReceipts(subscription: String, acknowledgedThrough: Int64, limit: Int) async throws
        -> [PushReceipt]
    {
        // The receipts read before go in the same statement that reads the rest.
        try await rows(
            """
            WITH read AS (
                DELETE FROM push_receipts WHERE subscription = \(subscription) AND sequence <= \(acknowledgedThrough))
            SELECT sequence, token, message_id, acknowledged_at, expires_at FROM push_receipts
            WHERE subscription = \(subscription) AND sequence > \(acknowledgedThrough)
            ORDER BY sequence LIMIT \(limit)
            """
        ).map { row in
            let (sequence, token, messageID, acknowledged, expires) = try row.decode(
                (Int64, String, String, Int64, Int64).self)
            return PushReceipt(
                sequence: sequence, subscription: subscription, token: token, messageID: messageID,
                acknowledgedAt: Timestamp(milliseconds: acknowledged), expiresAt: Timestamp(milliseconds: expires))
        }
    }

    public func deleteExpiredPushReceipts(now: Timestamp, limit: Int) async throws -> Int {
        try await count(
            """
            DELETE FROM push_receipts WHERE sequence IN (
                SELECT sequence FROM push_receipts WHERE expires_at <= \(now.milliseconds)
                ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING 1
            """)
    }
}
