public import HeraldCore
import NIOCore
import PostgresNIO

/// Projects' application server key pairs (`WebPushKeyStore`).
extension PostgresStore {
    public func webPushKey(projectID: String) async throws -> WebPushKey? {
        try await rows(
            "SELECT private_key, public_key, created_at FROM web_push_keys WHERE project_id = \(projectID)"
        ).first.map { row in
            let (privateKey, publicKey, created) = try row.decode((ByteBuffer, ByteBuffer, Int64).self)
            return WebPushKey(
                projectID: projectID, privateKey: Array(privateKey.readableBytesView),
                publicKey: Array(publicKey.readableBytesView), createdAt: Timestamp(milliseconds: created))
        }
    }

    public func keepWebPushKey(_ key: WebPushKey) async throws -> WebPushKey {
        try await transaction { connection in
            try await self.requireProject(key.projectID, on: connection)
            try await self.run(
                """
                INSERT INTO web_push_keys (project_id, private_key, public_key, created_at)
                VALUES (\(key.projectID), \(ByteBuffer(bytes: key.privateKey)), \(ByteBuffer(bytes: key.publicKey)),
                    \(key.createdAt.milliseconds))
                ON CONFLICT (project_id) DO NOTHING
                """, on: connection)
        }
        return try await webPushKey(projectID: key.projectID) ?? key
    }
}
