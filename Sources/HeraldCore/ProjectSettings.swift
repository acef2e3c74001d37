/// A project's limits and quotas; every number in SEMANTICS.md is one of these.
///
/// The operator changes them with `herald project set`; a running server picks the
/// change up within a second.
public struct ProjectSettings: Sendable, Hashable, Codable {
    /// Message size and validation limits (M2, D5).
    public var message: MessageLimits = MessageLimits()
    /// Non-collapsible messages stored per device (D1). Default 100.
    public var maxPending: Int = 100
    /// Distinct collapse keys stored per device (D2). Default 4.
    public var maxCollapseKeys: Int = 4
    /// Days without a connection after which a device is inactive (L5). Default 31.
    public var inactiveAfterDays: Int = 31
    /// Downstream messages per rolling minute (T1). Default 600,000.
    public var downstreamPerMinute: Int = 600_000
    /// Topic subscription changes per second (T2). Default 3,000.
    public var topicOpsPerSecond: Int = 3_000
    /// Fanouts in progress at once (T3). Default 1,000.
    public var maxFanouts: Int = 1_000
    /// Collapsible burst per app per device (T4). Default 20.
    public var collapsibleBurst: Int = 20
    /// Seconds to refill one collapsible token (T4). Default 180.
    public var collapsibleRefillSeconds: Int = 180
    /// Messages per device per minute (T6). Default 240.
    public var devicePerMinute: Int = 240
    /// Messages per device per hour (T6). Default 5,000.
    public var devicePerHour: Int = 5_000
    /// Upstream messages per minute per project (T5). Default 1,500,000.
    public var upstreamPerMinute: Int = 1_500_000
    /// Upstream messages per minute per device (T5). Default 1,000.
    public var upstreamDevicePerMinute: Int = 1_000
    /// New app-server connections per minute (T5). Default 400.
    public var xmppConnectsPerMinute: Int = 400
    /// App-server connections at once (T5). Default 2,500.
    public var xmppConnections: Int = 2_500
    /// Upstream messages waiting for the project's app servers (T5). Default 10,000.
    public var upstreamWaiting: Int = 10_000
    /// Device groups the project may have (T7). Default 100,000.
    public var maxDeviceGroups: Int = 100_000
    /// The Web Push public keys (VAPID, base64url) the project holds, as FCM's web push
    /// certificates: browser push channels made for one of these site keys may carry the
    /// project's web registrations. Default none (Firebase's default key needs none).
    public var webPushKeys: [String] = []
    /// Whether each app instance's outcome of a topic or condition message is kept as an
    /// event of its own, rather than only counted for the message (SEMANTICS E2). Default off.
    public var perDeviceEvents: Bool = false
    /// Whether a topic or condition send is also handed once to Google's topic or condition
    /// of the same name, in a project with a key for the hand-off to FCM (SEMANTICS R7).
    /// Default off.
    public var relayTopics: Bool = false

    public init() {}

    public init(from decoder: any Decoder) throws {
        // A setting added later is absent from settings stored before it: it keeps its default.
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ProjectSettings()
        func read<Value: Decodable>(_ key: CodingKeys, _ fallback: Value) throws -> Value {
            try container.decodeIfPresent(Value.self, forKey: key) ?? fallback
        }
        message = try read(.message, defaults.message)
        maxPending = try read(.maxPending, defaults.maxPending)
        maxCollapseKeys = try read(.maxCollapseKeys, defaults.maxCollapseKeys)
        inactiveAfterDays = try read(.inactiveAfterDays, defaults.inactiveAfterDays)
        downstreamPerMinute = try read(.downstreamPerMinute, defaults.downstreamPerMinute)
        topicOpsPerSecond = try read(.topicOpsPerSecond, defaults.topicOpsPerSecond)
        maxFanouts = try read(.maxFanouts, defaults.maxFanouts)
        collapsibleBurst = try read(.collapsibleBurst, defaults.collapsibleBurst)
        collapsibleRefillSeconds = try read(.collapsibleRefillSeconds, defaults.collapsibleRefillSeconds)
        devicePerMinute = try read(.devicePerMinute, defaults.devicePerMinute)
        devicePerHour = try read(.devicePerHour, defaults.devicePerHour)
        upstreamPerMinute = try read(.upstreamPerMinute, defaults.upstreamPerMinute)
        upstreamDevicePerMinute = try read(.upstreamDevicePerMinute, defaults.upstreamDevicePerMinute)
        xmppConnectsPerMinute = try read(.xmppConnectsPerMinute, defaults.xmppConnectsPerMinute)
        xmppConnections = try read(.xmppConnections, defaults.xmppConnections)
        upstreamWaiting = try read(.upstreamWaiting, defaults.upstreamWaiting)
        maxDeviceGroups = try read(.maxDeviceGroups, defaults.maxDeviceGroups)
        webPushKeys = try read(.webPushKeys, defaults.webPushKeys)
        perDeviceEvents = try read(.perDeviceEvents, defaults.perDeviceEvents)
        relayTopics = try read(.relayTopics, defaults.relayTopics)
    }

    /// The name `herald project set` takes for `webPushKeys`: a comma-separated list.
    public static let webPushKeysName = "web-push-keys"
    /// The name `herald project set` takes for `perDeviceEvents`: `true` or `false`.
    public static let perDeviceEventsName = "per-device-events"
    /// The name `herald project set` takes for `relayTopics`: `on` or `off`.
    public static let relayTopicsName = "relay-topics"

    /// Every numeric setting an operator can change, by the name `herald project set` takes.
    public static var names: [(name: String, keyPath: WritableKeyPath<ProjectSettings, Int>)] {
        [
            ("downstream-per-minute", \.downstreamPerMinute), ("topic-ops-per-second", \.topicOpsPerSecond),
            ("max-fanouts", \.maxFanouts), ("collapsible-burst", \.collapsibleBurst),
            ("collapsible-refill-seconds", \.collapsibleRefillSeconds), ("device-per-minute", \.devicePerMinute),
            ("device-per-hour", \.devicePerHour), ("max-pending", \.maxPending),
            ("max-collapse-keys", \.maxCollapseKeys),
            ("inactive-after-days", \.inactiveAfterDays), ("upstream-per-minute", \.upstreamPerMinute),
            ("upstream-device-per-minute", \.upstreamDevicePerMinute),
            ("xmpp-connects-per-minute", \.xmppConnectsPerMinute),
            ("xmpp-connections", \.xmppConnections), ("upstream-waiting", \.upstreamWaiting),
            ("max-device-groups", \.maxDeviceGroups),
            ("max-payload-bytes", \.message.maximumPayloadBytes),
            ("max-topic-payload-bytes", \.message.maximumTopicPayloadBytes),
        ]
    }

    /// Applies `name=value`; throws a message naming what is wrong.
    public mutating func apply(_ assignment: String) throws(SettingError) {
        let parts = assignment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { throw SettingError("expected name=value, got \(assignment)") }
        if parts[0] == Self.webPushKeysName {
            let keys = parts[1].split(separator: ",").map(String.init)
            guard let bad = keys.first(where: { !WebChannelBinding.isPublicKey($0) }) else {
                webPushKeys = keys
                return
            }
            throw SettingError("\(Self.webPushKeysName) takes P-256 public keys in base64url, got \(bad)")
        }
        if parts[0] == Self.perDeviceEventsName {
            guard let value = Bool(parts[1]) else {
                throw SettingError("\(Self.perDeviceEventsName) takes true or false, got \(parts[1])")
            }
            perDeviceEvents = value
            return
        }
        if parts[0] == Self.relayTopicsName {
            guard parts[1] == "on" || parts[1] == "off" else {
                throw SettingError("\(Self.relayTopicsName) takes on or off, got \(parts[1])")
            }
            relayTopics = parts[1] == "on"
            return
        }
        guard let setting = Self.names.first(where: { $0.name == parts[0] }) else {
            throw SettingError(
                "unknown setting \(parts[0]); known: \((Self.names.map(\.name) + [Self.webPushKeysName, Self.perDeviceEventsName, Self.relayTopicsName]).joined(separator: ", "))"
            )
        }
        guard let value = Int(parts[1]), value >= 0 else {
            throw SettingError("\(parts[0]) takes a whole number of at least 0, got \(parts[1])")
        }
        self[keyPath: setting.keyPath] = value
    }
}

/// A `herald project set` assignment that cannot be applied.
public struct SettingError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
