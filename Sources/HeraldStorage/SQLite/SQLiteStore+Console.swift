import Foundation
import GRDB
public import HeraldCore

/// The console's users and sessions (`ConsoleStore`).
extension SQLiteStore {
    public func saveConsoleUser(_ user: ConsoleUser) async throws {
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    INSERT OR REPLACE INTO console_users (name, password_hash, admin, projects, created_at)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    user.name, user.passwordHash, user.isAdmin, user.projectIDs.joined(separator: " "),
                    user.createdAt.milliseconds,
                ])
        }
    }

    public func consoleUser(name: String) async throws -> ConsoleUser? {
        try read { db in try Self.consoleUsers(where: "WHERE name = ?", [name], db).first }
    }

    public func consoleUsers() async throws -> [ConsoleUser] {
        try read { db in try Self.consoleUsers(where: "", [], db) }
    }

    static func consoleUsers(where clause: String, _ arguments: StatementArguments, _ db: Database) throws
        -> [ConsoleUser]
    {
        try db.fetchAllCached(
            sql: "SELECT name, password_hash, admin, projects, created_at FROM console_users \(clause) ORDER BY name",
            arguments: arguments
        ) { row in
            ConsoleUser(
                name: row.text(0), passwordHash: row.text(1), isAdmin: row.int64(2) != 0,
                projectIDs: row.text(3).split(separator: " ").map(String.init),
                createdAt: Timestamp(milliseconds: row.int64(4)))
        }
    }

    public func putConsoleValue(key: String, value: [UInt8], expiresAt: Timestamp?, replacing: Bool, now: Timestamp)
        async throws -> Bool
    {
        try await write(short: true) { db in
            if !replacing {
                try db.executeCached(
                    sql: "DELETE FROM console_values WHERE key = ? AND expires_at <= ?",
                    arguments: [key, now.milliseconds])
            }
            try db.executeCached(
                sql:
                    "INSERT OR \(replacing ? "REPLACE" : "IGNORE") INTO console_values (key, value, expires_at) VALUES (?, ?, ?)",
                arguments: [key, Data(value), expiresAt?.milliseconds])
            return db.changesCount > 0
        }
    }

    public func consoleValue(key: String, now: Timestamp) async throws -> (value: [UInt8], expiresAt: Timestamp?)? {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT value, expires_at FROM console_values
                    WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)
                    """,
                arguments: [key, now.milliseconds]
            ) { row in (row.bytes(0) ?? [], row.optionalInt64(1).map(Timestamp.init(milliseconds:))) }.first
        }
    }

    public func removeConsoleValue(key: String) async throws {
        try await write(short: true) { db in
            try db.executeCached(sql: "DELETE FROM console_values WHERE key = ?", arguments: [key])
        }
    }

    public func deleteExpiredConsoleValues(now: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: """
                    DELETE FROM console_values WHERE key IN (
                        SELECT key FROM console_values WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
                    """,
                arguments: [now.milliseconds, limit])
            return db.changesCount
        }
    }
}
