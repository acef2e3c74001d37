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

    public init(messageID: String, token: String = "", eachKept: Bool = true) {
        self.messageID = messageID
        self.token = token
        self.eachKept = eachKept
    }
}
