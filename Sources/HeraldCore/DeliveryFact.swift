/// The message a count is about, and for one app instance's fact its token (SEMANTICS E1).
///
/// A fact that is `eachKept` becomes an event of its own; otherwise only the message's
/// counts grow (SEMANTICS E2: per-device facts of topic and condition messages, unless the
/// project asks for each).
public struct DeliveryFact: Sendable, Hashable {
    public var messageID: String
    /// The app instance's token, whole: the store keeps it redacted. Empty for none.
    public var token: String
    public var eachKept: Bool
    /// Whether the app instance is reached through another push service (APNs, FCM): its
    /// delivery is the `handed_off` event.
    public var isHandOff: Bool

    public init(messageID: String, token: String = "", eachKept: Bool = true, isHandOff: Bool = false) {
        self.messageID = messageID
        self.token = token
        self.eachKept = eachKept
        self.isHandOff = isHandOff
    }
}
