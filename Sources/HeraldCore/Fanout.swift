/// A send to many devices, expanded in pages by the fanout engine (SEMANTICS T3).
public struct FanoutJob: Sendable, Hashable {
    /// What the job expands.
    public enum Audience: Sendable, Hashable {
        case topic(String)
        case condition(String)
        case deviceGroup(notificationKey: String)
    }

    public enum State: String, Sendable, Hashable {
        /// Waiting for a free slot (the project runs `maxFanouts` at once).
        case queued
        case running
        case done
    }

    /// The message id it delivers.
    public var messageID: String
    public var projectID: String
    public var audience: Audience
    /// The canonical message JSON (a `Message` body; the target comes from `audience`).
    public var body: String
    public var createdAt: Timestamp
    public var expiresAt: Timestamp
    public var state: State
    /// The devices connected when the job started (to the expanding node, then to the
    /// others): their app instances in the audience are reached first, a page of devices
    /// at a time, before the pages in token order (which leave these devices out).
    public var firstDevices: [UInt64]
    /// How many of `firstDevices` have been expanded; pages continue after them.
    public var firstDone: Int
    /// The last registration token expanded; pages continue after it, also after a restart.
    public var cursor: String
    /// How many app instances it reached so far.
    public var delivered: Int

    public init(
        messageID: String, projectID: String, audience: Audience, body: String, createdAt: Timestamp,
        expiresAt: Timestamp, state: State = .queued, firstDevices: [UInt64] = [], firstDone: Int = 0,
        cursor: String = "", delivered: Int = 0
    ) {
        self.messageID = messageID
        self.projectID = projectID
        self.audience = audience
        self.body = body
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.state = state
        self.firstDevices = firstDevices
        self.firstDone = firstDone
        self.cursor = cursor
        self.delivered = delivered
    }
}

/// A topic subscription (the v1 `TopicSubscription` resource).
public struct TopicSubscription: Sendable, Hashable {
    public var projectID: String
    public var token: String
    public var topic: String
    public var createdAt: Timestamp

    public init(projectID: String, token: String, topic: String, createdAt: Timestamp) {
        self.projectID = projectID
        self.token = token
        self.topic = topic
        self.createdAt = createdAt
    }
}

/// A device group: up to 20 registrations addressed by one notification key.
public struct DeviceGroup: Sendable, Hashable {
    public var projectID: String
    /// Unique per sender.
    public var name: String
    public var notificationKey: String
    public var members: [String]

    public init(projectID: String, name: String, notificationKey: String, members: [String]) {
        self.projectID = projectID
        self.name = name
        self.notificationKey = notificationKey
        self.members = members
    }

    /// A new unguessable notification key.
    public static func makeKey() -> String { "APA91b" + SecureRandom.token(bytes: 48) }
}
