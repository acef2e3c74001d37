import Foundation
import GRDB
public import HeraldCore

/// Projects' keys for the hand-off to FCM (`FCMRelayCredentialStore`).
extension SQLiteStore {
    public func setFCMRelayCredential(_ credential: FCMRelayCredential) async throws {
        try await write { db in
            try Self.requireProject(credential.projectID, db)
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO fcm_relay_credentials
                        (project_id, google_project_id, client_email, private_key_id, private_key, token_uri, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    credential.projectID, credential.googleProjectID, credential.clientEmail, credential.privateKeyID,
                    Data(credential.privateKeyPEM.utf8), credential.tokenURI, credential.createdAt.milliseconds,
                ])
            try Self.bumpRevision(db)
        }
    }

    public func fcmRelayCredential(projectID: String) async throws -> FCMRelayCredential? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM fcm_relay_credentials WHERE project_id = ?", arguments: [projectID]
            ).map { row in
                FCMRelayCredential(
                    projectID: projectID, googleProjectID: row["google_project_id"], clientEmail: row["client_email"],
                    privateKeyID: row["private_key_id"],
                    privateKeyPEM: String(decoding: (row["private_key"] as Data?) ?? Data(), as: UTF8.self),
                    tokenURI: row["token_uri"], createdAt: Timestamp(milliseconds: row["created_at"]))
            }
        }
    }

    public func removeFCMRelayCredential(projectID: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM fcm_relay_credentials WHERE project_id = ?", arguments: [projectID])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }
}
