/// A checked-in device (or browser profile): the identity its MCS connection logs in with.
public struct Device: Sendable, Hashable {
    /// The android id issued at check-in.
    public var androidID: UInt64
    /// The security token issued with it; the MCS login's password.
    public var securityToken: UInt64
    /// When it first checked in.
    public var createdAt: Timestamp
    /// When its connection last logged in; nil when it never has.
    public var lastConnectedAt: Timestamp?

    public init(androidID: UInt64, securityToken: UInt64, createdAt: Timestamp, lastConnectedAt: Timestamp? = nil) {
        self.androidID = androidID
        self.securityToken = securityToken
        self.createdAt = createdAt
        self.lastConnectedAt = lastConnectedAt
    }

    /// A device with a new random id and token.
    public static func make(at time: Timestamp) -> Device {
        var generator = SystemRandomNumberGenerator()
        return Device(
            androidID: UInt64.random(in: Self.handOffIDs.upperBound...UInt64(Int64.max), using: &generator),
            securityToken: UInt64.random(in: 1...UInt64.max, using: &generator), createdAt: time)
    }

    /// The ids of devices whose messages are handed to another push service rather than read
    /// by a connection of their own: one such device stands for each Apple app instance
    /// reached through APNs, and for each token of Google's handed to FCM. Connected devices'
    /// ids lie above them, so a queue's hand-offs are found by id alone.
    public static let handOffIDs: Range<UInt64> = 1..<1_000_000_000_000

    /// A new device standing for an app instance reached through APNs or FCM; it never connects.
    public static func makeHandOff(at time: Timestamp) -> Device {
        var generator = SystemRandomNumberGenerator()
        return Device(
            androidID: UInt64.random(in: handOffIDs, using: &generator),
            securityToken: UInt64.random(in: 1...UInt64.max, using: &generator), createdAt: time)
    }

    /// Whether `androidID` stands for an app instance reached through APNs or FCM.
    public static func isHandOff(_ androidID: UInt64) -> Bool { handOffIDs.contains(androidID) }
}

/// The platform an app instance runs on; it decides how messages are tailored (SEMANTICS P1).
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable {
    case android
    case apple
    case web
}

/// Web Push keys of a browser registration (RFC 8291).
public struct WebPushKeys: Sendable, Hashable {
    /// The receiver's P-256 public key, uncompressed.
    public var p256dh: [UInt8]
    /// The 16-byte auth secret.
    public var auth: [UInt8]
    /// `aesgcm` or `aes128gcm`.
    public var coding: String

    public init(p256dh: [UInt8], auth: [UInt8], coding: String) {
        self.p256dh = p256dh
        self.auth = auth
        self.coding = coding
    }
}

/// A registration token and what it is bound to (SEMANTICS C2, C3).
public struct Registration: Sendable, Hashable {
    /// What a token is.
    public enum Kind: String, Sendable, Hashable {
        /// A project's app instance: the token app servers send to.
        case app
        /// A browser's push channel from `register3`, which web registrations ride on.
        case webChannel = "web_channel"
    }

    /// The token.
    public var token: String
    public var kind: Kind
    /// The owning project, for `app` tokens.
    public var projectID: String?
    /// The sender the token was registered for: a project number, or a VAPID key.
    public var sender: String
    /// The app id or package name (`category` on the wire).
    public var appID: String
    /// The app instance's sub-id within a shared app (`subtype`), if any.
    public var subtype: String?
    public var platform: Platform
    /// The device whose connection carries its messages.
    public var androidID: UInt64
    /// The Firebase installation id, when registered through installations.
    public var installationID: String?
    /// Web Push keys, for web registrations.
    public var webKeys: WebPushKeys?
    /// Where APNs reaches the app instance, for Apple app instances registered with a device token.
    public var apns: APNsAddress?
    /// Whether the token is one Herald did not issue, whose messages go to FCM (SEMANTICS R1).
    public var isRelayedToFCM: Bool
    /// The endpoint at the browser's own push service, for a web registration whose messages
    /// are handed there as Web Push (SEMANTICS W1).
    public var webPushEndpoint: String?
    public var createdAt: Timestamp
    /// When the app instance was uninstalled or its token deleted (SEMANTICS L6).
    public var deletedAt: Timestamp?

    public init(
        token: String, kind: Kind, projectID: String?, sender: String, appID: String, subtype: String?,
        platform: Platform, androidID: UInt64, installationID: String? = nil, webKeys: WebPushKeys? = nil,
        apns: APNsAddress? = nil, isRelayedToFCM: Bool = false, webPushEndpoint: String? = nil, createdAt: Timestamp,
        deletedAt: Timestamp? = nil
    ) {
        self.apns = apns
        self.isRelayedToFCM = isRelayedToFCM
        self.webPushEndpoint = webPushEndpoint
        self.token = token
        self.kind = kind
        self.projectID = projectID
        self.sender = sender
        self.appID = appID
        self.subtype = subtype
        self.platform = platform
        self.androidID = androidID
        self.installationID = installationID
        self.webKeys = webKeys
        self.createdAt = createdAt
        self.deletedAt = deletedAt
    }

    /// A new unguessable token (256 random bits) in FCM's `<id>:APA91b<secret>` shape,
    /// with no `=` in it.
    public static func makeToken() -> String {
        SecureRandom.token(bytes: 16) + ":APA91b" + SecureRandom.token(bytes: 32)
    }

    /// Whether the app instance's messages are handed to another push service (APNs, FCM, a
    /// browser's) rather than read by a connection to Herald.
    public var isHandedOff: Bool { apns != nil || isRelayedToFCM || webPushEndpoint != nil }

    /// What the stores keep in a registration's hand-off column (`apns`): the APNs address's
    /// tuple, `fcmColumn` for a token handed to FCM, the endpoint (an `https` URL) of one
    /// handed to a browser's push service, or nothing.
    public var handOffColumn: String? {
        apns?.tuple ?? (isRelayedToFCM ? Self.fcmColumn : webPushEndpoint)
    }

    /// Reads a hand-off column back into the registration's APNs address, FCM flag or endpoint.
    public mutating func setHandOff(column: String?) {
        guard let column else { return }
        if column == Self.fcmColumn {
            isRelayedToFCM = true
        } else if column.hasPrefix("https://") {
            webPushEndpoint = column
        } else {
            apns = APNsAddress(tuple: column)
        }
    }
    /// The token of the registration that hands a project's topic and condition sends to
    /// Google's (SEMANTICS R7): not a registration token's shape, so no sender can name it.
    public static func fcmTopicsToken(projectID: String) -> String { "fcm-topics/" + projectID }

    /// The hand-off column of a token handed to FCM.
    public static let fcmColumn = "fcm"

    /// The registration Herald keeps for a token it did not issue, the first time `projectID`
    /// sends to it with a key for the hand-off to FCM (SEMANTICS R1), on the hand-off device
    /// `androidID`.
    public static func relayedToFCM(
        token: String, projectID: String, sender: String, androidID: UInt64, at time: Timestamp
    )
        -> Registration
    {
        Registration(
            token: token, kind: .app, projectID: projectID, sender: sender, appID: "", subtype: nil, platform: .android,
            androidID: androidID, isRelayedToFCM: true, createdAt: time)
    }

    /// A token shortened for logs, which never carry a whole one.
    public static func redacted(_ token: String) -> String {
        String(token.prefix(8)) + "…"
    }
}

/// A Firebase installation: an app instance's id and the refresh token that renews its auth token.
public struct Installation: Sendable, Hashable {
    public var fid: String
    public var projectID: String
    public var appID: String
    public var refreshToken: String
    public var createdAt: Timestamp

    public init(fid: String, projectID: String, appID: String, refreshToken: String, createdAt: Timestamp) {
        self.fid = fid
        self.projectID = projectID
        self.appID = appID
        self.refreshToken = refreshToken
        self.createdAt = createdAt
    }
}

/// A message waiting in a device's queue until the device acknowledges it.
public struct QueuedMessage: Sendable, Hashable {
    /// The queue position, assigned by the store; increases with every enqueue.
    public var sequence: Int64
    public var androidID: UInt64
    /// The registration it is for.
    public var token: String
    /// The id the device acknowledges it by.
    public var persistentID: String
    public var messageID: String
    public var projectID: String
    /// The serialized `DataMessageStanza`, tailored for the registration's platform.
    public var stanza: [UInt8]
    public var createdAt: Timestamp
    public var expiresAt: Timestamp
    /// The collapse key; nil when the message is not collapsible (SEMANTICS D2).
    public var collapseKey: String?
    /// Whether it may wake a dozing device (SEMANTICS D4).
    public var isHighPriority: Bool
    /// The app and analytics label it is counted under (SEMANTICS L7).
    public var appID: String
    public var analyticsLabel: String
    /// For a "messages deleted" signal, how many messages it reports; 0 for messages.
    public var deletedCount: Int
    /// The stanza to store as a "messages deleted" signal should this message overflow
    /// the queue (SEMANTICS D1); not stored itself.
    public var deletionSignalStanza: [UInt8]
    /// The app server's id for a message sent with `delivery_receipt_requested` on XMPP:
    /// when the device acknowledges the entry, a receipt naming it is kept for the app
    /// server (`UpstreamMessage.receipt`). Empty for none.
    public var receiptID: String
    /// Whether what becomes of it is kept as events of its own, or only counted for its
    /// message (SEMANTICS E2).
    public var keepsEvents: Bool

    public init(
        sequence: Int64 = 0, androidID: UInt64, token: String, persistentID: String, messageID: String,
        projectID: String, stanza: [UInt8], createdAt: Timestamp, expiresAt: Timestamp, collapseKey: String? = nil,
        isHighPriority: Bool = false, appID: String = "", analyticsLabel: String = "", deletedCount: Int = 0,
        deletionSignalStanza: [UInt8] = [], receiptID: String = "", keepsEvents: Bool = true
    ) {
        self.receiptID = receiptID
        self.keepsEvents = keepsEvents
        self.sequence = sequence
        self.androidID = androidID
        self.token = token
        self.persistentID = persistentID
        self.messageID = messageID
        self.projectID = projectID
        self.stanza = stanza
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.collapseKey = collapseKey
        self.isHighPriority = isHighPriority
        self.appID = appID
        self.analyticsLabel = analyticsLabel
        self.deletedCount = deletedCount
        self.deletionSignalStanza = deletionSignalStanza
    }

    /// How long a "messages deleted" signal waits for its device: four weeks (SEMANTICS L5).
    public static let deletionSignalLifetimeSeconds: Int64 = 2_419_200

    /// The statistics key this entry counts under.
    public var statKey: DeliveryStatKey {
        DeliveryStatKey(projectID: projectID, at: createdAt, appID: appID, label: analyticsLabel)
    }

    /// One of `counter` for this entry's message and app instance: a fact of its message
    /// (SEMANTICS E1), unless the entry is a "messages deleted" signal.
    public func stat(_ counter: DeliveryCounter) -> DeliveryStat {
        DeliveryStat(
            statKey, counter,
            fact: deletedCount == 0 && !messageID.isEmpty
                ? DeliveryFact(
                    messageID: messageID, token: token, eachKept: keepsEvents, isHandOff: Device.isHandOff(androidID))
                : nil)
    }
}

/// Per-app-instance queue limits (SEMANTICS D1, D2).
public struct QueueLimits: Sendable, Hashable {
    public var maximumPending: Int
    public var maximumCollapseKeys: Int

    public init(maximumPending: Int, maximumCollapseKeys: Int) {
        self.maximumPending = maximumPending
        self.maximumCollapseKeys = maximumCollapseKeys
    }

    /// A project's limits.
    public init(_ settings: ProjectSettings) {
        self.init(maximumPending: settings.maxPending, maximumCollapseKeys: settings.maxCollapseKeys)
    }

    /// No limits: every message is stored.
    public static let unlimited = QueueLimits(maximumPending: .max - 1, maximumCollapseKeys: .max)
}
