public import HeraldCore
import NIOCore
import PostgresNIO

/// Projects' keys for the hand-off to FCM (`FCMRelayCredentialStore`).
extension PostgresStore {
    public func setFCMRelayCredential(_ credential: FCMRelayCredential) async throws {
        try await transaction { connection in
            try await self.requireProject(credential.projectID, on: connection)
            try await self.run(
                """
                INSERT INTO fcm_relay_credentials
                    (project_id, google_project_id, client_email, private_key_id, private_key, token_uri, created_at)
                VALUES (\(credential.projectID), \(credential.googleProjectID), \(credential.clientEmail),
                    \(credential.privateKeyID), \(ByteBuffer(bytes: Array(credential.privateKeyPEM.utf8))),
                    \(credential.tokenURI), \(credential.createdAt.milliseconds))
                ON CONFLICT (project_id) DO UPDATE SET google_project_id = excluded.google_project_id,
                    client_email = excluded.client_email, private_key_id = excluded.private_key_id,
                    private_key = excluded.private_key, token_uri = excluded.token_uri, created_at = excluded.created_at
                """, on: connection)
            try await self.bumpRevision(connection)
        }
    }

    public func fcmRelayCredential(projectID: String) async throws -> FCMRelayCredential? {
        try await rows(
            """
            SELECT google_project_id, client_email, private_key_id, private_key, token_uri, created_at
            FROM fcm_relay_credentials WHERE project_id = \(projectID)
            """
        ).first.map { row in
            let (googleProjectID, clientEmail, keyID, key, tokenURI, created) = try row.decode(
                (String, String, String, ByteBuffer, String, Int64).self)
            return FCMRelayCredential(
                projectID: projectID, googleProjectID: googleProjectID, clientEmail: clientEmail, privateKeyID: keyID,
                privateKeyPEM: String(buffer: key), tokenURI: tokenURI, createdAt: Timestamp(milliseconds: created))
        }
    }

    public func removeFCMRelayCredential(projectID: String) async throws -> Bool {
        try await transaction { connection in
            let removed = try await self.count(
                "DELETE FROM fcm_relay_credentials WHERE project_id = \(projectID) RETURNING 1", on: connection)
            if removed > 0 { try await self.bumpRevision(connection) }
            return removed > 0
        }
    }
}
