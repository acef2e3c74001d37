public import HeraldCore
import HeraldProtocol
public import HeraldStorage
public import Logging

/// The store work of Mozilla's push protocol (Firefox, Sunup): the device a `uaid` names,
/// and the push channels a connection registers, each a `webChannel` registration owned by
/// the project the operator named for the protocol (SEMANTICS W6), so that its messages
/// count against that project and leave events there. A channel's endpoint is one of
/// Herald's own Web Push endpoints (`/wp/<token>`).
public final class MozillaPushService: Sendable {
    /// The app id every channel made over the protocol is registered under; the channel id is
    /// the registration's subtype (which the Web Push stanza carries).
    public static let appID = "mozilla-push"
    /// The most live channels one browser or phone may hold.
    public static let maximumChannels = 1_000

    /// The project that owns every channel made over the protocol on this node.
    public let projectID: String
    /// Where endpoints are issued, without a trailing slash: the public URL, or in drop-in
    /// mode `https://updates.push.services.mozilla.com`.
    public let endpointBase: String
    let store: any RegistrationStore
    let clock: any HeraldClock
    let logger: Logger

    public init(
        projectID: String, endpointBase: String, store: any RegistrationStore, clock: any HeraldClock, logger: Logger
    ) {
        self.projectID = projectID
        self.endpointBase = endpointBase.hasSuffix("/") ? String(endpointBase.dropLast()) : endpointBase
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// The device `uaid` names when it is one of ours, else a new device: the client is
    /// told its new `uaid` and drops the channels it had, as autopush's clients do.
    func device(named uaid: String?) async throws -> Device {
        if let uaid, let named = MozillaPushUAID.device(uaid), !Device.isHandOff(named.androidID),
            let device = try await store.device(androidID: named.androidID),
            device.securityToken == named.securityToken
        {
            return device
        }
        let device = Device.make(at: clock.now())
        try await store.createDevice(device)
        logger.info(
            "mozilla push client given a new uaid",
            metadata: ["device": "\(device.androidID)", "returning": "\(uaid != nil)"])
        return device
    }

    /// What `register` answers: the endpoint and 200, or no endpoint and the status.
    struct Registered: Sendable {
        var endpoint: String?
        var status: Int
    }

    /// Registers a channel, or answers the one registered already under the same key; its
    /// endpoint is under `endpointBase` (this service's, or drop-in mode's updates host).
    func register(channelID: String, key: String?, androidID: UInt64, endpointBase: String) async throws
        -> Registered
    {
        if let key, WebChannelBinding.publicKey(key) == nil {
            return Registered(endpoint: nil, status: 400)
        }
        let channels = try await store.registrations(androidID: androidID).filter {
            $0.deletedAt == nil && $0.kind == .webChannel && $0.appID == Self.appID
        }
        if let existing = channels.first(where: { $0.subtype == channelID }) {
            guard existing.sender == key ?? "" else { return Registered(endpoint: nil, status: 409) }
            return Registered(endpoint: endpoint(endpointBase, existing.token), status: 200)
        }
        guard channels.count < Self.maximumChannels else { return Registered(endpoint: nil, status: 429) }
        let registration = Registration(
            token: Registration.makeToken(), kind: .webChannel, projectID: projectID, sender: key ?? "",
            appID: Self.appID, subtype: channelID, platform: .web, androidID: androidID, createdAt: clock.now())
        try await store.createRegistration(registration)
        return Registered(endpoint: endpoint(endpointBase, registration.token), status: 200)
    }

    /// Deletes a channel; nothing when there is none.
    func unregister(channelID: String, androidID: UInt64) async throws {
        for channel in try await store.registrations(androidID: androidID)
        where channel.deletedAt == nil && channel.appID == Self.appID && channel.subtype == channelID {
            _ = try await store.deleteRegistration(token: channel.token, at: clock.now())
        }
    }

    private func endpoint(_ base: String, _ token: String) -> String {
        base + "/wp/" + token
    }
}
