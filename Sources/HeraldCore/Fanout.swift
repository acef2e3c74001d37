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
    /// Where the pages continue, also after a restart: a `FanoutPosition`'s `cursor`.
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

/// Where a fanout's pages of app instances continue.
///
/// Pages are read in the order of the instances' devices (their android ids as the store
/// keeps them, signed), then tokens: a page's queue rows then fall on neighbouring entries of
/// the queue's device index, and a commit rewrites a few of its pages instead of most of
/// them. Jobs stored before that order kept the last token as their cursor; they go on in
/// token order.
public enum FanoutPosition: Sendable, Hashable {
    case start
    /// After this device and token.
    case after(device: Int64, token: String)
    /// After this token, in token order.
    case afterToken(String)

    /// The position just past `registration`, in this position's order.
    public func advanced(past registration: Registration) -> FanoutPosition {
        if case .afterToken = self { return .afterToken(registration.token) }
        let (device, token) = Self.key(registration)
        return .after(device: device, token: token)
    }

    /// Reads a stored cursor.
    public init(cursor: String) {
        guard let first = cursor.first else {
            self = .start
            return
        }
        guard first == Self.mark, let colon = cursor.firstIndex(of: ":"),
            let device = Int64(cursor[cursor.index(after: cursor.startIndex)..<colon])
        else {
            self = .afterToken(cursor)
            return
        }
        self = .after(device: device, token: String(cursor[cursor.index(after: colon)...]))
    }

    /// The text stored as `FanoutJob.cursor`. A token never starts with the mark.
    public var cursor: String {
        switch self {
        case .start: ""
        case .after(let device, let token): "\(Self.mark)\(device):\(token)"
        case .afterToken(let token): token
        }
    }

    /// Whether `registration` comes after this position, in the position's order.
    public func precedes(_ registration: Registration) -> Bool {
        switch self {
        case .start: true
        case .after(let device, let token): (device, token) < Self.key(registration)
        case .afterToken(let token): token < registration.token
        }
    }

    /// The registrations that come after this position, in its order, at most `limit`.
    public func page(of registrations: some Sequence<Registration>, limit: Int) -> [Registration] {
        let later = registrations.filter(precedes)
        guard case .afterToken = self else { return Array(later.sorted { Self.key($0) < Self.key($1) }.prefix(limit)) }
        return Array(later.sorted { $0.token < $1.token }.prefix(limit))
    }

    /// A registration's place in page order: its device as the store keeps it (signed), then its token.
    private static func key(_ registration: Registration) -> (Int64, String) {
        (Int64(bitPattern: registration.androidID), registration.token)
    }

    private static let mark: Character = "@"
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

    /// Whether `token` has a notification key's shape (`makeKey`: no instance id and colon
    /// before `APA91b`, as every registration token has), so that a send to a registration
    /// token need not look for a group.
    public static func mayBeKey(_ token: String) -> Bool { !token.utf8.contains(UInt8(ascii: ":")) }
}
