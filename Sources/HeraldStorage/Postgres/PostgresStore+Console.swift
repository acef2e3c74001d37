public import HeraldCore
import NIOCore
import PostgresNIO

/// The console's users and sessions (`ConsoleStore`).
extension PostgresStore {
    public func saveConsoleUser(_ user: ConsoleUser) async throws {
        try await run(
            """
            INSERT INTO console_users (name, password_hash, admin, projects, created_at)
            VALUES (\(user.name), \(user.passwordHash), \(user.isAdmin), \(user.projectIDs.joined(separator: " ")),
                \(user.createdAt.milliseconds))
            ON CONFLICT (name) DO UPDATE SET password_hash = EXCLUDED.password_hash, admin = EXCLUDED.admin,
                projects = EXCLUDED.projects, created_at = EXCLUDED.created_at
            """)
    }

    public func consoleUser(name: String) async throws -> ConsoleUser? {
        try await consoleUsers(
            "SELECT name, password_hash, admin, projects, created_at FROM console_users WHERE name = \(name)"
        ).first
    }

    public func consoleUsers() async throws -> [ConsoleUser] {
        try await consoleUsers(
            "SELECT name, password_hash, admin, projects, created_at FROM console_users ORDER BY name")
    }

    private func consoleUsers(_ query: PostgresQuery) async throws -> [ConsoleUser] {
        try await rows(query).map { row in
            let (name, hash, admin, projects, created) = try row.decode((String, String, Bool, String, Int64).self)
            return ConsoleUser(
                name: name, passwordHash: hash, isAdmin: admin,
                projectIDs: projects.split(separator: " ").map(String.init),
                createdAt: Timestamp(milliseconds: created))
        }
    }

    public func putConsoleValue(key: String, value: [UInt8], expiresAt: Timestamp?, replacing: Bool, now: Timestamp)
        async throws -> Bool
    {
        let bytes = ByteBuffer(bytes: value)
        let expires = expiresAt?.milliseconds
        guard replacing else {
            // Only a value that has expired is written over.
            return try await count(
                """
                INSERT INTO console_values (key, value, expires_at) VALUES (\(key), \(bytes), \(expires))
                ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
                WHERE console_values.expires_at <= \(now.milliseconds)
                RETURNING 1
                """) > 0
        }
        try await run(
            """
            INSERT INTO console_values (key, value, expires_at) VALUES (\(key), \(bytes), \(expires))
            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
            """)
        return true
    }

    public func consoleValue(key: String, now: Timestamp) async throws -> (value: [UInt8], expiresAt: Timestamp?)? {
        try await rows(
            """
            SELECT value, expires_at FROM console_values
            WHERE key = \(key) AND (expires_at IS NULL OR expires_at > \(now.milliseconds))
            """
        ).first.map { row in
            let (value, expires) = try row.decode((ByteBuffer, Int64?).self)
            return (Array(value.readableBytesView), expires.map(Timestamp.init(milliseconds:)))
        }
    }

    public func removeConsoleValue(key: String) async throws {
        try await run("DELETE FROM console_values WHERE key = \(key)")
    }

    public func deleteExpiredConsoleValues(now: Timestamp, limit: Int) async throws -> Int {
        try await count(
            """
            DELETE FROM console_values WHERE key IN (
                SELECT key FROM console_values WHERE expires_at <= \(now.milliseconds)
                ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING 1
            """)
    }
}
