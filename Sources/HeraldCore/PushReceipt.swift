/// The receipt of a Web Push message (RFC 8030 §5.1): the device acknowledged the message a
/// sender posted with a receipt asked for. It waits in the store, under the receipt
/// subscription the sender named, until the sender has read it or four weeks have passed.
public struct PushReceipt: Sendable, Hashable {
    /// The store's position, which orders a subscription's receipts; 0 before it is stored.
    public var sequence: Int64
    /// The receipt subscription it goes to (the last part of its URL).
    public var subscription: String
    /// The push channel the message went to, and the message's id: with them, the message
    /// resource the sender was given.
    public var token: String
    public var messageID: String
    public var acknowledgedAt: Timestamp
    public var expiresAt: Timestamp

    /// How long a receipt waits for its sender: four weeks, as an XMPP receipt does.
    public static let lifetimeSeconds = UpstreamMessage.receiptLifetimeSeconds

    public init(
        sequence: Int64 = 0, subscription: String, token: String, messageID: String, acknowledgedAt: Timestamp,
        expiresAt: Timestamp? = nil
    ) {
        self.sequence = sequence
        self.subscription = subscription
        self.token = token
        self.messageID = messageID
        self.acknowledgedAt = acknowledgedAt
        self.expiresAt = expiresAt ?? acknowledgedAt.adding(seconds: Self.lifetimeSeconds)
    }

    /// Whether `text` can name a receipt subscription: 16 to 64 characters of base64url, as
    /// the ones Herald makes are.
    public static func isSubscription(_ text: String) -> Bool {
        (16...64).contains(text.utf8.count) && text.utf8.allSatisfy(Base64URL.isAlphabet)
    }
}
