import Foundation
import GRDB
public import HeraldCore

/// Projects, keys and secrets (`CredentialStore`).
extension SQLiteStore {
    // MARK: Projects

    public func createProject(_ project: Project, firstKey: ServiceAccountKey) async throws {
        let settings = try StoreCoding.encode(project.settings)
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO projects (id, number, api_key, server_key, created_at, settings)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    project.id, project.number, project.apiKey, project.serverKey, project.createdAt.milliseconds,
                    settings,
                ])
            try Self.insert(firstKey, db)
            try Self.bumpRevision(db)
        }
    }

    public func project(id: String) async throws -> Project? {
        try read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM projects WHERE id = ?", arguments: [id]).map(Self.project)
        }
    }

    public func projects() async throws -> [Project] {
        try read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM projects ORDER BY id").map(Self.project)
        }
    }

    public func updateSettings(_ settings: ProjectSettings, projectID: String) async throws -> Bool {
        let encoded = try StoreCoding.encode(settings)
        return try await write { db in
            try db.executeCached(sql: "UPDATE projects SET settings = ? WHERE id = ?", arguments: [encoded, projectID])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }

    public func deleteProject(id: String) async throws -> Bool {
        defer { registrations.forgetAll() }
        return try await write { db in
            try db.executeCached(sql: "DELETE FROM projects WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }

    // MARK: Keys

    public func addServiceAccountKey(_ key: ServiceAccountKey) async throws {
        try await write { db in
            guard
                try Bool.fetchOne(cached: db, sql: "SELECT 1 FROM projects WHERE id = ?", arguments: [key.projectID])
                    != nil
            else { throw StoreError.notFound("project \(key.projectID)") }
            try Self.insert(key, db)
            try Self.bumpRevision(db)
        }
    }

    public func serviceAccountKey(id: String) async throws -> ServiceAccountKey? {
        try read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM service_account_keys WHERE id = ?", arguments: [id])
                .map(Self.key)
        }
    }

    public func serviceAccountKeys(projectID: String) async throws -> [ServiceAccountKey] {
        try read { db in
            try Row.fetchAll(
                cached: db, sql: "SELECT * FROM service_account_keys WHERE project_id = ? ORDER BY created_at, id",
                arguments: [projectID]
            ).map(Self.key)
        }
    }

    public func allServiceAccountKeys() async throws -> [ServiceAccountKey] {
        try read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM service_account_keys ORDER BY created_at, id").map(
                Self.key)
        }
    }

    public func revokeServiceAccountKey(id: String, at time: Timestamp) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE service_account_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                arguments: [time.milliseconds, id])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }

    public func credentialsRevision() async throws -> Int64 {
        let revision = try read { db in
            try Int64.fetchOne(cached: db, sql: "SELECT value FROM counters WHERE name = 'credentials_revision'") ?? 0
        }
        let moved = lastCredentialsRevision.withLock { last in
            defer { last = revision }
            return last != nil && last != revision
        }
        if moved { registrations.forgetAll() }
        return revision
    }

    // MARK: Secrets

    public func secret(named name: String, orCreate make: @escaping @Sendable () -> [UInt8]) async throws -> [UInt8] {
        try await write { db in
            if let existing = try Data.fetchOne(
                cached: db, sql: "SELECT value FROM secrets WHERE name = ?", arguments: [name])
            {
                return Array(existing)
            }
            let value = make()
            try db.executeCached(
                sql: "INSERT INTO secrets (name, value) VALUES (?, ?)", arguments: [name, Data(value)])
            return value
        }
    }

    public func rotateSecret(named name: String, to value: [UInt8], at time: Timestamp) async throws {
        try await write { db in
            let current =
                try Data.fetchOne(cached: db, sql: "SELECT value FROM secrets WHERE name = ?", arguments: [name])
                ?? Data()
            for (key, stored) in [
                (name + SecretRotation.previousSuffix, current),
                (name + SecretRotation.rotatedAtSuffix, Data(SecretRotation.encode(time))),
                (name, Data(value)),
            ] {
                try db.executeCached(
                    sql: "INSERT OR REPLACE INTO secrets (name, value) VALUES (?, ?)", arguments: [key, stored])
            }
            try Self.bumpRevision(db)
        }
    }

    static func insert(_ key: ServiceAccountKey, _ db: Database) throws {
        try db.executeCached(
            sql: """
                INSERT INTO service_account_keys (id, project_id, client_email, public_key_pem, created_at, revoked_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                key.id, key.projectID, key.clientEmail, key.publicKeyPEM, key.createdAt.milliseconds,
                key.revokedAt?.milliseconds,
            ])
    }

    static func bumpRevision(_ db: Database) throws {
        try db.executeCached(sql: "UPDATE counters SET value = value + 1 WHERE name = 'credentials_revision'")
    }

    static func project(_ row: Row) throws -> Project {
        Project(
            id: row["id"], number: row["number"], apiKey: row["api_key"], serverKey: row["server_key"],
            createdAt: Timestamp(milliseconds: row["created_at"]),
            settings: try StoreCoding.decodeSettings(row["settings"]))
    }

    static func key(_ row: Row) -> ServiceAccountKey {
        ServiceAccountKey(
            id: row["id"], projectID: row["project_id"], clientEmail: row["client_email"],
            publicKeyPEM: row["public_key_pem"], createdAt: Timestamp(milliseconds: row["created_at"]),
            revokedAt: (row["revoked_at"] as Int64?).map { Timestamp(milliseconds: $0) })
    }
}
