public import HeraldCore
import NIOCore
import PostgresNIO

/// Devices, registrations and installations (`RegistrationStore`).
extension PostgresStore {
    // MARK: Devices and registrations

    public func createDevice(_ device: Device) async throws {
        try await run(
            """
            INSERT INTO devices (android_id, security_token, created_at)
            VALUES (\(Int64(bitPattern: device.androidID)), \(Int64(bitPattern: device.securityToken)),
                \(device.createdAt.milliseconds))
            """)
    }

    public func device(androidID: UInt64) async throws -> Device? {
        try await rows(
            """
            SELECT android_id, security_token, created_at, last_connected_at FROM devices
            WHERE android_id = \(Int64(bitPattern: androidID))
            """
        ).first.map { row in
            let (id, token, created, connected) = try row.decode((Int64, Int64, Int64, Int64?).self)
            return Device(
                androidID: UInt64(bitPattern: id), securityToken: UInt64(bitPattern: token),
                createdAt: Timestamp(milliseconds: created),
                lastConnectedAt: connected.map(Timestamp.init(milliseconds:)))
        }
    }

    public func createRegistration(_ registration: Registration) async throws {
        try await run(
            """
            INSERT INTO registrations (token, kind, project_id, sender, app_id, subtype, platform, android_id,
                installation_id, p256dh, auth, coding, created_at, apns)
            VALUES (\(registration.token), \(registration.kind.rawValue), \(registration.projectID),
                \(registration.sender), \(registration.appID), \(registration.subtype),
                \(registration.platform.rawValue), \(Int64(bitPattern: registration.androidID)),
                \(registration.installationID), \(registration.webKeys.map { ByteBuffer(bytes: $0.p256dh) }),
                \(registration.webKeys.map { ByteBuffer(bytes: $0.auth) }), \(registration.webKeys?.coding),
                \(registration.createdAt.milliseconds), \(registration.handOffColumn))
            """)
    }

    public func registration(token: String) async throws -> Registration? {
        try await rows("SELECT \(unescaped: Self.registrationColumns) FROM registrations WHERE token = \(token)")
            .first.map(Self.registration)
    }

    public func registration(installationID: String, projectID: String) async throws -> Registration? {
        try await rows(
            """
            SELECT \(unescaped: Self.registrationColumns) FROM registrations
            WHERE project_id = \(projectID) AND installation_id = \(installationID)
            ORDER BY created_at DESC, token DESC LIMIT 1
            """
        ).first.map(Self.registration)
    }

    public func registrations(androidID: UInt64) async throws -> [Registration] {
        try await rows(
            """
            SELECT \(unescaped: Self.registrationColumns) FROM registrations
            WHERE android_id = \(Int64(bitPattern: androidID)) AND deleted_at IS NULL ORDER BY token
            """
        ).map(Self.registration)
    }

    public func webRegistrations(projectID: String, limit: Int) async throws -> [Registration] {
        try await rows(
            """
            SELECT \(unescaped: Self.registrationColumns) FROM registrations
            WHERE project_id = \(projectID) AND platform = 'web' AND deleted_at IS NULL ORDER BY token LIMIT \(limit)
            """
        ).map(Self.registration)
    }

    public func deleteRegistration(token: String, at time: Timestamp) async throws -> Registration? {
        try await transaction { connection in
            guard
                let row = try await self.rows(
                    """
                    SELECT \(unescaped: Self.registrationColumns) FROM registrations
                    WHERE token = \(token) AND deleted_at IS NULL FOR UPDATE
                    """, on: connection
                ).first
            else { return nil }
            var registration = try Self.registration(row)
            registration.deletedAt = time
            try await self.run(
                "UPDATE registrations SET deleted_at = \(time.milliseconds) WHERE token = \(token)", on: connection)
            let discarded = try await self.rows(
                """
                DELETE FROM device_queue
                WHERE android_id = \(Int64(bitPattern: registration.androidID)) AND token = \(token)
                RETURNING \(unescaped: Self.queueColumns)
                """, on: connection
            ).map(Self.queued)
            try await self.record(
                discarded.filter { $0.deletedCount == 0 }.map { $0.stat(.unregistered) },
                on: connection)
            return registration
        }
    }

    public func lastConnections(androidIDs: [UInt64]) async throws -> [UInt64: Timestamp?] {
        guard !androidIDs.isEmpty else { return [:] }
        var result: [UInt64: Timestamp?] = [:]
        for row in try await rows(
            """
            SELECT android_id, last_connected_at FROM devices
            WHERE android_id = ANY(\(androidIDs.map { Int64(bitPattern: $0) }))
            """)
        {
            let (id, connected) = try row.decode((Int64, Int64?).self)
            result[UInt64(bitPattern: id)] = connected.map(Timestamp.init(milliseconds:))
        }
        return result
    }

    /// Records the login and claims the device's connection for this node.
    public func recordConnection(androidID: UInt64, at time: Timestamp) async throws {
        try await run(
            """
            UPDATE devices SET last_connected_at = \(time.milliseconds), holder_node = \(nodeID)
            WHERE android_id = \(Int64(bitPattern: androidID))
            """)
    }

    public func createInstallation(_ installation: Installation) async throws -> Bool {
        try await count(
            """
            INSERT INTO installations (project_id, fid, app_id, refresh_token, created_at)
            VALUES (\(installation.projectID), \(installation.fid), \(installation.appID),
                \(installation.refreshToken), \(installation.createdAt.milliseconds))
            ON CONFLICT (project_id, fid) DO NOTHING RETURNING 1
            """) == 1
    }

    public func installation(fid: String, projectID: String) async throws -> Installation? {
        try await rows(
            """
            SELECT fid, project_id, app_id, refresh_token, created_at FROM installations
            WHERE project_id = \(projectID) AND fid = \(fid)
            """
        ).first.map { row in
            let (fid, project, app, refresh, created) = try row.decode((String, String, String, String, Int64).self)
            return Installation(
                fid: fid, projectID: project, appID: app, refreshToken: refresh,
                createdAt: Timestamp(milliseconds: created))
        }
    }

    public func deleteAbandonedDevices(checkedInBefore: Timestamp, limit: Int) async throws -> Int {
        try await count(
            """
            DELETE FROM devices WHERE android_id IN (
                SELECT android_id FROM devices
                WHERE created_at < \(checkedInBefore.milliseconds) AND last_connected_at IS NULL
                AND NOT EXISTS (SELECT 1 FROM registrations WHERE registrations.android_id = devices.android_id)
                LIMIT \(limit))
            RETURNING 1
            """)
    }

    public func deleteAbandonedInstallations(createdBefore: Timestamp, limit: Int) async throws -> Int {
        try await count(
            """
            DELETE FROM installations WHERE (project_id, fid) IN (
                SELECT project_id, fid FROM installations
                WHERE created_at < \(createdBefore.milliseconds) AND NOT EXISTS (
                    SELECT 1 FROM registrations WHERE registrations.project_id = installations.project_id
                    AND registrations.installation_id = installations.fid)
                LIMIT \(limit))
            RETURNING 1
            """)
    }

    static let registrationColumns = SQLiteStore.registrationColumns

    static func registration(_ row: PostgresRow) throws -> Registration {
        let (
            token, kind, project, sender, app, subtype, platform, device, installation, p256dh, auth, coding, created,
            deleted, apns
        ) = try row.decode(
            (
                String, String, String?, String, String, String?, String, Int64, String?, ByteBuffer?, ByteBuffer?,
                String?, Int64, Int64?, String?
            ).self)
        var keys: WebPushKeys?
        if let p256dh, let auth {
            keys = WebPushKeys(
                p256dh: Array(p256dh.readableBytesView), auth: Array(auth.readableBytesView), coding: coding ?? "aesgcm"
            )
        }
        var registration = Registration(
            token: token, kind: Registration.Kind(rawValue: kind) ?? .app, projectID: project, sender: sender,
            appID: app, subtype: subtype, platform: Platform(rawValue: platform) ?? .android,
            androidID: UInt64(bitPattern: device), installationID: installation, webKeys: keys,
            createdAt: Timestamp(milliseconds: created), deletedAt: deleted.map(Timestamp.init(milliseconds:)))
        registration.setHandOff(column: apns)
        return registration
    }
}
