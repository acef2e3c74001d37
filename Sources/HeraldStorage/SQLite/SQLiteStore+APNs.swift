import Foundation
import GRDB
public import HeraldCore

/// Projects' APNs credentials (`APNsCredentialStore`).
extension SQLiteStore {
    public func setAPNsCredential(_ credential: APNsCredential) async throws {
        let row = APNsCredentialRow(credential)
        try await write { db in
            try Self.requireProject(credential.projectID, db)
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO apns_credentials
                        (project_id, kind, bundle_id, environment, key_id, team_id, secret, password, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    credential.projectID, row.kind, credential.bundleID, credential.environment.rawValue, row.keyID,
                    row.teamID, Data(row.secret), row.password, credential.createdAt.milliseconds,
                ])
            try Self.bumpRevision(db)
        }
    }

    /// Throws `StoreError.notFound("project")` unless the project exists: a credential is set
    /// only for one.
    static func requireProject(_ projectID: String, _ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM projects WHERE id = ?", arguments: [projectID]) ?? false
        else { throw StoreError.notFound("project") }
    }

    public func apnsCredentials(projectID: String) async throws -> [APNsCredential] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM apns_credentials WHERE project_id = ? ORDER BY kind DESC",
                arguments: [projectID]
            ).compactMap { row in
                APNsCredentialRow(
                    kind: row["kind"], keyID: row["key_id"], teamID: row["team_id"],
                    secret: [UInt8]((row["secret"] as Data?) ?? Data()), password: row["password"]
                ).credential(
                    projectID: projectID, bundleID: row["bundle_id"], environment: row["environment"],
                    createdAt: Timestamp(milliseconds: row["created_at"]))
            }
        }
    }

    public func removeAPNsCredential(projectID: String, kind: APNsCredential.Kind) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM apns_credentials WHERE project_id = ? AND kind = ?",
                arguments: [projectID, kind.rawValue])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }
}
