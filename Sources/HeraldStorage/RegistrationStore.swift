public import HeraldCore

/// Devices (check-ins), app registrations (tokens), installations and when each device
/// last connected.
///
/// Every method is a transaction of its own; a method that returns has made its change
/// durable.
public protocol RegistrationStore: Sendable {
    /// Records a checked-in device. Throws `StoreError.conflict` when the id is taken.
    func createDevice(_ device: Device) async throws

    /// The device with this android id.
    func device(androidID: UInt64) async throws -> Device?

    /// Records a new registration. Throws `StoreError.conflict` when the token is taken,
    /// `StoreError.notFound` when its project or device does not exist.
    func createRegistration(_ registration: Registration) async throws

    /// The registration holding this token.
    func registration(token: String) async throws -> Registration?

    /// The newest registration of a project's installation.
    func registration(installationID: String, projectID: String) async throws -> Registration?

    /// The registration holding this token, with its device's last connection and, when
    /// `countingRecentBefore` is given, the messages to it in the minute and hour before
    /// (`Recipient`: what a store cannot read in the same round trip it leaves unknown).
    func recipient(token: String, countingRecentBefore now: Timestamp?) async throws -> Recipient?

    /// The newest registration of a project's installation, as a `Recipient`.
    func recipient(installationID: String, projectID: String, countingRecentBefore now: Timestamp?) async throws
        -> Recipient?

    /// Every live registration a device's connection carries.
    func registrations(androidID: UInt64) async throws -> [Registration]

    /// Up to `limit` of a project's live web registrations (browsers' and Web Push
    /// receivers' app tokens, each riding a push channel), by token.
    func webRegistrations(projectID: String, limit: Int) async throws -> [Registration]

    /// Marks a registration deleted (SEMANTICS L6) and discards its queued messages,
    /// counting them as unregistered; answers the registration, nil when there is no live one.
    func deleteRegistration(token: String, at time: Timestamp) async throws -> Registration?

    /// The last connection of each of these devices (nil for one that never connected).
    func lastConnections(androidIDs: [UInt64]) async throws -> [UInt64: Timestamp?]

    /// Records that a device's connection logged in.
    func recordConnection(androidID: UInt64, at time: Timestamp) async throws

    /// Records a new Firebase installation; false, changing nothing, when the project has
    /// one with its id already (an installation is never replaced).
    func createInstallation(_ installation: Installation) async throws -> Bool

    /// A project's installation with this id.
    func installation(fid: String, projectID: String) async throws -> Installation?

    /// Removes up to `limit` devices that checked in before `checkedInBefore` and never
    /// registered an app nor connected; answers how many.
    func deleteAbandonedDevices(checkedInBefore: Timestamp, limit: Int) async throws -> Int

    /// Removes up to `limit` installations created before `createdBefore` that no
    /// registration names; answers how many.
    func deleteAbandonedInstallations(createdBefore: Timestamp, limit: Int) async throws -> Int
}

extension RegistrationStore {
    /// A new device standing for an app instance reached through another push service (APNs,
    /// FCM, a browser's), with an id no device has.
    public func createHandOffDevice(at time: Timestamp) async throws -> Device {
        var device = Device.makeHandOff(at: time)
        while try await self.device(androidID: device.androidID) != nil { device = Device.makeHandOff(at: time) }
        try await createDevice(device)
        return device
    }

    /// The registration alone: its device and its recent messages are read apart, where needed.
    public func recipient(token: String, countingRecentBefore now: Timestamp?) async throws -> Recipient? {
        try await registration(token: token).map { Recipient(registration: $0) }
    }

    public func recipient(installationID: String, projectID: String, countingRecentBefore now: Timestamp?)
        async throws -> Recipient?
    {
        try await registration(installationID: installationID, projectID: projectID).map {
            Recipient(registration: $0)
        }
    }
}
