import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Everything a device keeps between runs: its check-in identity, its registration, its
/// Web Push keys, and the ids of messages it has handled (so that a message delivered
/// again after a reconnect or a restart reaches the app once).
public struct DeviceIdentity: Codable, Sendable, Equatable {
    public var androidID: UInt64
    public var securityToken: UInt64
    /// The registration token app servers send to.
    public var token: String
    public var projectID: String
    /// The project number, the sender id messages come from.
    public var projectNumber: String
    public var appID: String
    public var platform: String
    /// The Firebase installation id.
    public var installationID: String?
    /// For web registrations: the P-256 private key (raw, base64url) and auth secret.
    public var webPrivateKey: String?
    public var webAuthSecret: String?
    /// The device's Web Push subscription, if it made one.
    public var webPush: WebPushSubscription?
    /// Ids of handled messages, newest last, at most `handledLimit`.
    public var handledMessageIDs: [String] = []
    /// Persistent ids handled but not yet acknowledged to the server.
    public var unacknowledgedIDs: [String] = []

    /// How many handled ids are remembered.
    public static let handledLimit = 1000

    /// Reads an identity file; nil when there is none.
    public static func load(from path: String) throws -> DeviceIdentity? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try JSONDecoder().decode(DeviceIdentity.self, from: data)
    }

    /// Writes the identity file atomically, readable by its owner only.
    public func save(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}
