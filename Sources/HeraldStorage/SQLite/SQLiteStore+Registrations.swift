import Foundation
import GRDB
public import HeraldCore
import Synchronization

/// Devices, registrations and installations (`RegistrationStore`).
extension SQLiteStore {
    // MARK: Devices and registrations

    public func createDevice(_ device: Device) async throws {
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO devices (android_id, security_token, created_at) VALUES (?, ?, ?)",
                arguments: [
                    Int64(bitPattern: device.androidID), Int64(bitPattern: device.securityToken),
                    device.createdAt.milliseconds,
                ])
        }
    }

    public func device(androidID: UInt64) async throws -> Device? {
        try read { db in
            try Row.fetchOne(
                cached: db, sql: "SELECT * FROM devices WHERE android_id = ?", arguments: [Int64(bitPattern: androidID)]
            ).map { row in
                Device(
                    androidID: UInt64(bitPattern: row["android_id"]),
                    securityToken: UInt64(bitPattern: row["security_token"]),
                    createdAt: Timestamp(milliseconds: row["created_at"]),
                    lastConnectedAt: (row["last_connected_at"] as Int64?).map { Timestamp(milliseconds: $0) })
            }
        }
    }

    public func createRegistration(_ registration: Registration) async throws {
        defer { registrations.forget(token: registration.token) }
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO registrations (token, kind, project_id, sender, app_id, subtype, platform, android_id,
                        installation_id, p256dh, auth, coding, created_at, apns)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    registration.token, registration.kind.rawValue, registration.projectID, registration.sender,
                    registration.appID, registration.subtype, registration.platform.rawValue,
                    Int64(bitPattern: registration.androidID), registration.installationID,
                    registration.webKeys.map { Data($0.p256dh) }, registration.webKeys.map { Data($0.auth) },
                    registration.webKeys?.coding, registration.createdAt.milliseconds, registration.handOffColumn,
                ])
        }
    }

    public func registration(token: String) async throws -> Registration? {
        if let known = registrations.registration(token: token) { return known }
        let generation = registrations.generation
        let found = try read { db in
            try db.fetchAllCached(
                sql: "SELECT \(Self.registrationColumns) FROM registrations WHERE token = ?", arguments: [token],
                Self.registration
            ).first
        }
        if let found { registrations.keep(found, readAt: generation) }
        return found
    }

    public func registration(installationID: String, projectID: String) async throws -> Registration? {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.registrationColumns) FROM registrations WHERE project_id = ? AND installation_id = ?
                    ORDER BY created_at DESC, token DESC LIMIT 1
                    """,
                arguments: [projectID, installationID], Self.registration
            ).first
        }
    }

    public func registrations(androidID: UInt64) async throws -> [Registration] {
        try read { db in
            try db.fetchAllCached(
                sql:
                    "SELECT \(Self.registrationColumns) FROM registrations WHERE android_id = ? AND deleted_at IS NULL ORDER BY token",
                arguments: [Int64(bitPattern: androidID)], Self.registration)
        }
    }

    public func webRegistrations(projectID: String, limit: Int) async throws -> [Registration] {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.registrationColumns) FROM registrations
                    WHERE project_id = ? AND platform = 'web' AND deleted_at IS NULL ORDER BY token LIMIT ?
                    """,
                arguments: [projectID, limit], Self.registration)
        }
    }

    public func deleteRegistration(token: String, at time: Timestamp) async throws -> Registration? {
        defer { registrations.forget(token: token) }
        return try await write { db in
            guard
                var registration = try db.fetchAllCached(
                    sql: "SELECT \(Self.registrationColumns) FROM registrations WHERE token = ? AND deleted_at IS NULL",
                    arguments: [token], Self.registration
                ).first
            else { return nil }
            registration.deletedAt = time
            try db.executeCached(
                sql: "UPDATE registrations SET deleted_at = ? WHERE token = ?", arguments: [time.milliseconds, token])
            let discarded = try Self.deleteQueued(
                where: "android_id = ? AND token = ?", [Int64(bitPattern: registration.androidID), token], db)
            try self.record(discarded.messages.map { $0.stat(.unregistered) }, db)
            return registration
        }
    }

    public func lastConnections(androidIDs: [UInt64]) async throws -> [UInt64: Timestamp?] {
        guard !androidIDs.isEmpty else { return [:] }
        return try read { db in
            var result: [UInt64: Timestamp?] = [:]
            try Self.forEachRow(
                db, "SELECT android_id, last_connected_at FROM devices WHERE android_id IN (?)",
                of: androidIDs.map { Int64(bitPattern: $0) }
            ) { row in
                result[UInt64(bitPattern: row.int64(0))] = row.optionalInt64(1).map { Timestamp(milliseconds: $0) }
            }
            return result
        }
    }

    public func recordConnection(androidID: UInt64, at time: Timestamp) async throws {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE devices SET last_connected_at = ? WHERE android_id = ?",
                arguments: [time.milliseconds, Int64(bitPattern: androidID)])
        }
    }

    public func createInstallation(_ installation: Installation) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT OR IGNORE INTO installations (project_id, fid, app_id, refresh_token, created_at)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    installation.projectID, installation.fid, installation.appID, installation.refreshToken,
                    installation.createdAt.milliseconds,
                ])
            return db.changesCount == 1
        }
    }

    public func installation(fid: String, projectID: String) async throws -> Installation? {
        try read { db in
            try Row.fetchOne(
                cached: db, sql: "SELECT * FROM installations WHERE project_id = ? AND fid = ?",
                arguments: [projectID, fid]
            ).map { row in
                Installation(
                    fid: row["fid"], projectID: row["project_id"], appID: row["app_id"],
                    refreshToken: row["refresh_token"], createdAt: Timestamp(milliseconds: row["created_at"]))
            }
        }
    }

    public func deleteAbandonedDevices(checkedInBefore: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: """
                    DELETE FROM devices WHERE android_id IN (
                        SELECT android_id FROM devices
                        WHERE created_at < ? AND last_connected_at IS NULL
                        AND NOT EXISTS (SELECT 1 FROM registrations WHERE registrations.android_id = devices.android_id)
                        LIMIT ?)
                    """, arguments: [checkedInBefore.milliseconds, limit])
            return db.changesCount
        }
    }

    public func deleteAbandonedInstallations(createdBefore: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: """
                    DELETE FROM installations WHERE rowid IN (
                        SELECT rowid FROM installations
                        WHERE created_at < ? AND NOT EXISTS (
                            SELECT 1 FROM registrations WHERE registrations.project_id = installations.project_id
                            AND registrations.installation_id = installations.fid)
                        LIMIT ?)
                    """, arguments: [createdBefore.milliseconds, limit])
            return db.changesCount
        }
    }

    /// `columns` (a comma-separated list) each prefixed with `table`. The lists are a few
    /// fixed ones and every fanout page asks again, so each answer is kept.
    static func qualified(_ columns: String, by table: String) -> String {
        let key = table + "\u{0}" + columns
        if let known = qualifiedLists.withLock({ $0[key] }) { return known }
        let made = columns.split(separator: ",").map {
            "\(table)." + $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        .joined(separator: ", ")
        qualifiedLists.withLock { $0[key] = made }
        return made
    }

    static let qualifiedLists = Mutex<[String: String]>([:])

    /// The registration columns in the order `registration(_:)` reads them by position.
    static let registrationColumns = """
        token, kind, project_id, sender, app_id, subtype, platform, android_id, installation_id, p256dh, auth, coding, \
        created_at, deleted_at, apns
        """

    static func registration(_ row: ColumnReader) -> Registration {
        var keys: WebPushKeys?
        if let p256dh = row.bytes(9), let auth = row.bytes(10) {
            keys = WebPushKeys(p256dh: p256dh, auth: auth, coding: row.optionalText(11) ?? "aesgcm")
        }
        var registration = Registration(
            token: row.text(0), kind: Registration.Kind(rawValue: row.text(1)) ?? .app, projectID: row.optionalText(2),
            sender: row.text(3), appID: row.text(4), subtype: row.optionalText(5),
            platform: Platform(rawValue: row.text(6)) ?? .android, androidID: UInt64(bitPattern: row.int64(7)),
            installationID: row.optionalText(8), webKeys: keys, createdAt: Timestamp(milliseconds: row.int64(12)),
            deletedAt: row.optionalInt64(13).map { Timestamp(milliseconds: $0) })
        registration.setHandOff(column: row.optionalText(14))
        return registration
    }
}
