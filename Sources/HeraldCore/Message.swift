/// A validated downstream message, as the v1 API's `Message` describes it.
///
/// `body` is the canonical JSON form (proto names, no `name`, no target); the typed
/// properties are views of it that the server reads on every send.
public struct Message: Sendable, Equatable {
    /// Who the message is for.
    public enum Target: Sendable, Hashable {
        case token(String)
        case topic(String)
        case condition(Condition)
        case fid(String)

        /// Whether the target reaches many devices through the fanout engine.
        public var isFanout: Bool {
            switch self {
            case .topic, .condition: return true
            case .token, .fid: return false
            }
        }
    }

    /// The target.
    public var target: Target
    /// The canonical message without target fields.
    public var body: JSONValue

    public init(target: Target, body: JSONValue) {
        self.target = target
        self.body = body
    }

    /// The common data payload.
    public var data: [String: String] { body["data"]?.stringMap ?? [:] }

    /// The common notification payload, if any.
    public var notification: JSONValue? { body["notification"] }

    /// Whether this is a notification message (SEMANTICS M1): it carries user-visible keys
    /// in the common block or in any platform block.
    public var isNotificationMessage: Bool {
        notification != nil || body["android"]?["notification"] != nil || body["webpush"]?["notification"] != nil
            || body["apns"]?["payload"]?["aps"]?["alert"] != nil
    }

    /// The analytics label: the Android one when set, else the common one.
    public var analyticsLabel: String? {
        body["android"]?["fcm_options"]?["analytics_label"]?.stringValue
            ?? body["fcm_options"]?["analytics_label"]?.stringValue
    }

    /// The Android time to live in whole seconds, when set.
    public var androidTTLSeconds: Int64? {
        body["android"]?["ttl"]?.stringValue.flatMap(ProtoDuration.parseSeconds)
    }
}
