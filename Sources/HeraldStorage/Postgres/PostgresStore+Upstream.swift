public import HeraldCore
import PostgresNIO

/// Upstream messages and delivery receipts for app servers (`UpstreamStore`).
extension PostgresStore {
    static func upstream(_ row: PostgresRow) throws -> UpstreamMessage {
        let (sequence, project, kind, messageID, token, category, device, data, created, expires) = try row.decode(
            (Int64, String, String, String, String, String, Int64, String, Int64, Int64).self)
        return UpstreamMessage(
            sequence: sequence, projectID: project, kind: UpstreamMessage.Kind(rawValue: kind) ?? .message,
            messageID: messageID, token: token, category: category, androidID: UInt64(bitPattern: device),
            data: UpstreamMessage.data(fromJSON: data), createdAt: Timestamp(milliseconds: created),
            expiresAt: Timestamp(milliseconds: expires))
    }

    @discardableResult
    public func appendUpstream(_ messages: [UpstreamMessage]) async throws -> Int {
        guard !messages.isEmpty else { return 0 }
        return try await count(
            """
            INSERT INTO upstream_messages
                (project_id, kind, message_id, token, category, android_id, data, created_at, expires_at)
            SELECT * FROM UNNEST(\(messages.map(\.projectID))::text[], \(messages.map(\.kind.rawValue))::text[],
                \(messages.map(\.messageID))::text[], \(messages.map(\.token))::text[],
                \(messages.map(\.category))::text[], \(messages.map { Int64(bitPattern: $0.androidID) })::bigint[],
                \(messages.map { $0.kind == .message ? $0.dataJSON : "" })::text[],
                \(messages.map(\.createdAt.milliseconds))::bigint[], \(messages.map(\.expiresAt.milliseconds))::bigint[])
            ON CONFLICT DO NOTHING RETURNING 1
            """)
    }

    public func leaseUpstream(projectID: String, holder: String, now: Timestamp, until: Timestamp, limit: Int)
        async throws -> [UpstreamMessage]
    {
        // Rows another node is leasing are skipped, not waited for.
        try await rows(
            """
            UPDATE upstream_messages SET holder = \(holder), leased_until = \(until.milliseconds)
            WHERE sequence IN (
                SELECT sequence FROM upstream_messages
                WHERE project_id = \(projectID) AND leased_until <= \(now.milliseconds)
                    AND expires_at > \(now.milliseconds)
                ORDER BY sequence LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING sequence, project_id, kind, message_id, token, category, android_id, data, created_at, expires_at
            """
        ).map(Self.upstream).sorted { $0.sequence < $1.sequence }
    }

    public func releaseUpstream(holderPrefix: String) async throws {
        try await run(
            """
            UPDATE upstream_messages SET holder = '', leased_until = 0
            WHERE holder <> '' AND starts_with(holder, \(holderPrefix))
            """)
    }

    @discardableResult
    public func acknowledgeUpstream(projectID: String, messageID: String, token: String?) async throws -> Bool {
        try await count(
            """
            DELETE FROM upstream_messages WHERE project_id = \(projectID) AND message_id = \(messageID)
                AND (\(token)::text IS NULL OR kind = 'receipt' OR token = \(token))
            RETURNING 1
            """) > 0
    }

    public func deleteExpiredUpstream(now: Timestamp, limit: Int) async throws -> [UpstreamMessage] {
        try await rows(
            """
            DELETE FROM upstream_messages WHERE sequence IN (
                SELECT sequence FROM upstream_messages WHERE expires_at <= \(now.milliseconds)
                ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING sequence, project_id, kind, message_id, token, category, android_id, data, created_at, expires_at
            """
        ).map(Self.upstream)
    }

    public func upstreamCount(projectID: String) async throws -> Int {
        let row = try await rows("SELECT COUNT(*) FROM upstream_messages WHERE project_id = \(projectID)").first
        return Int(try row?.decode(Int64.self) ?? 0)
    }

    public func upstreamWaiting(projectID: String, androidID: UInt64) async throws -> (project: Int, device: Int) {
        let row = try await rows(
            """
            SELECT (SELECT COUNT(*) FROM upstream_messages WHERE project_id = \(projectID)),
                (SELECT COUNT(*) FROM upstream_messages
                WHERE android_id = \(Int64(bitPattern: androidID)) AND kind = 'message')
            """
        ).first
        guard let row else { return (0, 0) }
        let (project, device) = try row.decode((Int64, Int64).self)
        return (Int(project), Int(device))
    }
}
