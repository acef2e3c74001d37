/// The delivery options one registration gets from a message, read the way its platform
/// reads them (SEMANTICS P2, D3).
///
/// - Time to live: `android.ttl`; for Apple `apns-expiration` (an absolute epoch, 0 = now
///   or never); for the web the `TTL` header; else the project's maximum (28 days).
/// - Priority: `android.priority` HIGH; `apns-priority` 10 (absent: 10 for notification
///   messages, 5 for data); web `Urgency: high`.
/// - Collapse key: `android.collapse_key`, `apns-collapse-id`, the web `Topic` header.
///   Notification messages are always collapsible: on Android they ignore `collapse_key`
///   and use the app id; elsewhere the platform's key, or the app id. Topic messages with
///   no payload are collapsible under the app id.
public struct DeliveryOptions: Sendable, Equatable {
    public var ttlSeconds: Int64
    public var isHighPriority: Bool
    public var collapseKey: String?

    public init(ttlSeconds: Int64, isHighPriority: Bool, collapseKey: String?) {
        self.ttlSeconds = ttlSeconds
        self.isHighPriority = isHighPriority
        self.collapseKey = collapseKey
    }

    /// The options of `message` for an app instance of `appID` on `platform`.
    public init(
        message: Message, platform: Platform, appID: String, limits: MessageLimits, now: Timestamp
    ) {
        let body = message.body
        let defaultTTL = limits.maximumTTLSeconds
        let isNotification = message.isNotificationMessage
        let isEmptyTopicMessage: Bool
        if case .topic = message.target {
            isEmptyTopicMessage = body["data"] == nil && body["notification"] == nil && !isNotification
        } else {
            isEmptyTopicMessage = false
        }
        switch platform {
        case .android:
            ttlSeconds = message.androidTTLSeconds ?? defaultTTL
            isHighPriority = body["android"]?["priority"]?.stringValue == "HIGH"
            collapseKey = isNotification ? appID : body["android"]?["collapse_key"]?.stringValue
        case .apple:
            let headers = HeaderMap(body["apns"]?["headers"])
            if let expiration = headers["apns-expiration"].flatMap(Int64.init) {
                ttlSeconds = expiration == 0 ? 0 : min(defaultTTL, max(0, expiration - now.seconds))
            } else {
                ttlSeconds = defaultTTL
            }
            isHighPriority = (headers["apns-priority"] ?? (isNotification ? "10" : "5")) == "10"
            collapseKey = headers["apns-collapse-id"] ?? (isNotification ? appID : nil)
        case .web:
            let headers = HeaderMap(body["webpush"]?["headers"])
            ttlSeconds = headers["ttl"].flatMap(Int64.init) ?? defaultTTL
            isHighPriority = headers["urgency"] == "high"
            collapseKey = headers["topic"] ?? (isNotification ? appID : nil)
        }
        if collapseKey == nil, isEmptyTopicMessage { collapseKey = appID }
    }
}
