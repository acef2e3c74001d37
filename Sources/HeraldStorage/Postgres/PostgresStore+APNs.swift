public import HeraldCore
import NIOCore
import PostgresNIO

/// Projects' APNs credentials (`APNsCredentialStore`).
extension PostgresStore {
    public func setAPNsCredential(_ credential: APNsCredential) async throws {
        let row = APNsCredentialRow(credential)
        try await transaction { connection in
            try await self.requireProject(credential.projectID, on: connection)
            try await self.run(
                """
                INSERT INTO apns_credentials
                    (project_id, kind, bundle_id, environment, key_id, team_id, secret, password, created_at)
                VALUES (\(credential.projectID), \(row.kind), \(credential.bundleID),
                    \(credential.environment.rawValue), \(row.keyID), \(row.teamID), \(ByteBuffer(bytes: row.secret)),
                    \(row.password), \(credential.createdAt.milliseconds))
                ON CONFLICT (project_id, kind) DO UPDATE SET bundle_id = excluded.bundle_id,
                    environment = excluded.environment, key_id = excluded.key_id, team_id = excluded.team_id,
                    secret = excluded.secret, password = excluded.password, created_at = excluded.created_at
                """, on: connection)
            try await self.bumpRevision(connection)
        }
    }

    /// Throws `StoreError.notFound("project")` unless the project exists: a credential is set
    /// only for one.
    func requireProject(_ projectID: String, on connection: PostgresConnection) async throws {
        guard try await !rows("SELECT 1 FROM projects WHERE id = \(projectID)", on: connection).isEmpty else {
            throw StoreError.notFound("project")
        }
    }

    public func apnsCredentials(projectID: String) async throws -> [APNsCredential] {
        try await rows(
            """
            SELECT kind, bundle_id, environment, key_id, team_id, secret, password, created_at
            FROM apns_credentials WHERE project_id = \(projectID) ORDER BY kind DESC
            """
        ).compactMap { row in
            let (kind, bundle, environment, keyID, teamID, secret, password, created) = try row.decode(
                (String, String, String, String, String, ByteBuffer, String?, Int64).self)
            return APNsCredentialRow(
                kind: kind, keyID: keyID, teamID: teamID, secret: Array(secret.readableBytesView), password: password
            ).credential(
                projectID: projectID, bundleID: bundle, environment: environment,
                createdAt: Timestamp(milliseconds: created))
        }
    }

    public func removeAPNsCredential(projectID: String, kind: APNsCredential.Kind) async throws -> Bool {
        try await transaction { connection in
            let removed = try await self.count(
                "DELETE FROM apns_credentials WHERE project_id = \(projectID) AND kind = \(kind.rawValue) RETURNING 1",
                on: connection)
            if removed > 0 { try await self.bumpRevision(connection) }
            return removed > 0
        }
    }
}
