import Foundation
import GRDB
public import HeraldCore

/// Projects' application server key pairs (`WebPushKeyStore`).
extension SQLiteStore {
    public func webPushKey(projectID: String) async throws -> WebPushKey? {
        try read { db in try Self.webPushKey(projectID: projectID, db) }
    }

    public func keepWebPushKey(_ key: WebPushKey) async throws -> WebPushKey {
        try await write { db in
            try Self.requireProject(key.projectID, db)
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO web_push_keys (project_id, private_key, public_key, created_at)
                    VALUES (?, ?, ?, ?)
                    """,
                arguments: [key.projectID, Data(key.privateKey), Data(key.publicKey), key.createdAt.milliseconds])
            return try Self.webPushKey(projectID: key.projectID, db) ?? key
        }
    }

    private static func webPushKey(projectID: String, _ db: Database) throws -> WebPushKey? {
        try Row.fetchOne(db, sql: "SELECT * FROM web_push_keys WHERE project_id = ?", arguments: [projectID]).map {
            row in
            WebPushKey(
                projectID: projectID, privateKey: Array((row["private_key"] as Data?) ?? Data()),
                publicKey: Array((row["public_key"] as Data?) ?? Data()),
                createdAt: Timestamp(milliseconds: row["created_at"]))
        }
    }
}
