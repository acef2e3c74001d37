public import HeraldCore
import NIOCore
import PostgresNIO

/// Projects, keys and secrets (`CredentialStore`).
extension PostgresStore {
    // MARK: Projects

    public func createProject(_ project: Project, firstKey: ServiceAccountKey) async throws {
        let settings = try StoreCoding.encode(project.settings)
        try await transaction { connection in
            try await self.run(
                """
                INSERT INTO projects (id, number, api_key, server_key, created_at, settings)
                VALUES (\(project.id), \(project.number), \(project.apiKey), \(project.serverKey),
                    \(project.createdAt.milliseconds), \(settings))
                """, on: connection)
            try await self.insert(firstKey, on: connection)
            try await self.bumpRevision(connection)
        }
    }

    public func project(id: String) async throws -> Project? {
        try await rows("SELECT \(unescaped: Self.projectColumns) FROM projects WHERE id = \(id)").first.map(
            Self.project)
    }

    public func projects() async throws -> [Project] {
        try await rows("SELECT \(unescaped: Self.projectColumns) FROM projects ORDER BY id").map(Self.project)
    }

    public func updateSettings(_ settings: ProjectSettings, projectID: String) async throws -> Bool {
        let encoded = try StoreCoding.encode(settings)
        return try await transaction { connection in
            let changed = try await self.count(
                "UPDATE projects SET settings = \(encoded) WHERE id = \(projectID) RETURNING 1", on: connection)
            guard changed > 0 else { return false }
            try await self.bumpRevision(connection)
            return true
        }
    }

    public func deleteProject(id: String) async throws -> Bool {
        try await transaction { connection in
            let deleted = try await self.count("DELETE FROM projects WHERE id = \(id) RETURNING 1", on: connection)
            guard deleted > 0 else { return false }
            try await self.bumpRevision(connection)
            return true
        }
    }

    // MARK: Keys

    public func addServiceAccountKey(_ key: ServiceAccountKey) async throws {
        try await transaction { connection in
            guard try await self.count("SELECT 1 FROM projects WHERE id = \(key.projectID)", on: connection) > 0
            else { throw StoreError.notFound("project \(key.projectID)") }
            try await self.insert(key, on: connection)
            try await self.bumpRevision(connection)
        }
    }

    public func serviceAccountKey(id: String) async throws -> ServiceAccountKey? {
        try await rows("SELECT \(unescaped: Self.keyColumns) FROM service_account_keys WHERE id = \(id)").first.map(
            Self.key)
    }

    public func serviceAccountKeys(projectID: String) async throws -> [ServiceAccountKey] {
        try await rows(
            """
            SELECT \(unescaped: Self.keyColumns) FROM service_account_keys WHERE project_id = \(projectID)
            ORDER BY created_at, id
            """
        ).map(Self.key)
    }

    public func allServiceAccountKeys() async throws -> [ServiceAccountKey] {
        try await rows("SELECT \(unescaped: Self.keyColumns) FROM service_account_keys ORDER BY created_at, id").map(
            Self.key)
    }

    public func revokeServiceAccountKey(id: String, at time: Timestamp) async throws -> Bool {
        try await transaction { connection in
            let changed = try await self.count(
                """
                UPDATE service_account_keys SET revoked_at = \(time.milliseconds)
                WHERE id = \(id) AND revoked_at IS NULL RETURNING 1
                """, on: connection)
            guard changed > 0 else { return false }
            try await self.bumpRevision(connection)
            return true
        }
    }

    public func credentialsRevision() async throws -> Int64 {
        try await rows("SELECT value FROM counters WHERE name = 'credentials_revision'").first?.decode(Int64.self) ?? 0
    }

    // MARK: Secrets

    public func secret(named name: String, orCreate make: @escaping @Sendable () -> [UInt8]) async throws -> [UInt8] {
        let read: PostgresQuery = "SELECT value FROM secrets WHERE name = \(name)"
        if let stored = try await rows(read).first {
            return Array(try stored.decode(ByteBuffer.self).readableBytesView)
        }
        // The first node to insert wins; every node reads the stored value back.
        try await run(
            "INSERT INTO secrets (name, value) VALUES (\(name), \(ByteBuffer(bytes: make()))) ON CONFLICT DO NOTHING")
        guard let stored = try await rows(read).first else { throw StoreError.notFound("secret \(name)") }
        return Array(try stored.decode(ByteBuffer.self).readableBytesView)
    }

    public func rotateSecret(named name: String, to value: [UInt8], at time: Timestamp) async throws {
        try await transaction { connection in
            let current =
                try await self.rows(
                    "SELECT value FROM secrets WHERE name = \(name) FOR UPDATE", on: connection
                ).first.map { Array(try $0.decode(ByteBuffer.self).readableBytesView) } ?? []
            for (key, stored) in [
                (name + SecretRotation.previousSuffix, current),
                (name + SecretRotation.rotatedAtSuffix, SecretRotation.encode(time)),
                (name, value),
            ] {
                try await self.run(
                    """
                    INSERT INTO secrets (name, value) VALUES (\(key), \(ByteBuffer(bytes: stored)))
                    ON CONFLICT (name) DO UPDATE SET value = excluded.value
                    """, on: connection)
            }
            try await self.bumpRevision(connection)
        }
    }

    func insert(_ key: ServiceAccountKey, on connection: PostgresConnection) async throws {
        try await run(
            """
            INSERT INTO service_account_keys (id, project_id, client_email, public_key_pem, created_at, revoked_at)
            VALUES (\(key.id), \(key.projectID), \(key.clientEmail), \(key.publicKeyPEM), \(key.createdAt.milliseconds),
                \(key.revokedAt?.milliseconds))
            """, on: connection)
    }

    func bumpRevision(_ connection: PostgresConnection) async throws {
        try await run("UPDATE counters SET value = value + 1 WHERE name = 'credentials_revision'", on: connection)
    }

    static let projectColumns = "id, number, api_key, server_key, created_at, settings"

    static func project(_ row: PostgresRow) throws -> Project {
        let (id, number, apiKey, serverKey, created, settings) = try row.decode(
            (String, Int64, String, String, Int64, String).self)
        return Project(
            id: id, number: number, apiKey: apiKey, serverKey: serverKey, createdAt: Timestamp(milliseconds: created),
            settings: try StoreCoding.decodeSettings(settings))
    }

    static let keyColumns = "id, project_id, client_email, public_key_pem, created_at, revoked_at"

    static func key(_ row: PostgresRow) throws -> ServiceAccountKey {
        let (id, project, email, pem, created, revoked) = try row.decode(
            (String, String, String, String, Int64, Int64?).self)
        return ServiceAccountKey(
            id: id, projectID: project, clientEmail: email, publicKeyPEM: pem,
            createdAt: Timestamp(milliseconds: created), revokedAt: revoked.map(Timestamp.init(milliseconds:)))
    }
}
