/// A push message an application server posts to a push channel (RFC 8030 §5), read from
/// its headers and body before the channel is looked up: how long it may wait, how urgent it
/// is, the topic that replaces an undelivered one, and the encrypted body with what the
/// device needs to decrypt it (RFC 8291, and the older `aesgcm` draft).
public struct WebPushRequest: Sendable, Equatable {
    /// Whether `text` may be a `Topic` (RFC 8030 §5.4): 1 to 32 characters of the URL- and
    /// filename-safe base64 alphabet.
    public static func isTopic(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy(Base64URL.isAlphabet)
    }

    /// RFC 8030 §5.3. Only `high` wakes a dozing device (SEMANTICS D4).
    public enum Urgency: String, Sendable, Equatable {
        case veryLow = "very-low"
        case low
        case normal
        case high
    }

    /// Why the request was refused, with the HTTP status it gets.
    public struct Refusal: Error, Sendable, Equatable {
        public var status: Int
        public var reason: String
        /// For 429: seconds until the sender may try again.
        public var retryAfterSeconds: Int?

        public init(status: Int, reason: String, retryAfterSeconds: Int? = nil) {
            self.status = status
            self.reason = reason
            self.retryAfterSeconds = retryAfterSeconds
        }
    }

    /// The time to live the message is kept for (the request's, or the longest kept).
    public var ttlSeconds: Int64
    public var urgency: Urgency
    public var topic: String?
    /// `aes128gcm` or `aesgcm`; nil for a push without a body.
    public var contentEncoding: String?
    /// For `aesgcm`: the `Encryption` header (`salt=…`) and the `Crypto-Key` header (`dh=…`).
    public var encryption: String?
    public var cryptoKey: String?
    public var body: [UInt8]
    /// `Prefer: respond-async`: the sender wants a receipt when the device has the message,
    /// and is answered `202 Accepted` with a link to the receipt subscription it goes to.
    public var wantsReceipt: Bool
    /// `Push-Receipt` (RFC 8030 §5.1): the receipt subscription the sender wants the receipt
    /// in, one it was given before.
    public var pushReceipt: String?

    /// The longest a push message is kept: four weeks (SEMANTICS D5).
    public static let maximumTTLSeconds: Int64 = 2_419_200
    /// The largest body (RFC 8030 §7.2 asks push services to take at least 4,096 bytes).
    public static let maximumBodyBytes = 4096

    public init(
        ttlSeconds: Int64, urgency: Urgency = .normal, topic: String? = nil, contentEncoding: String? = nil,
        encryption: String? = nil, cryptoKey: String? = nil, body: [UInt8] = [], wantsReceipt: Bool = false,
        pushReceipt: String? = nil
    ) {
        self.ttlSeconds = ttlSeconds
        self.urgency = urgency
        self.topic = topic
        self.contentEncoding = contentEncoding
        self.encryption = encryption
        self.cryptoKey = cryptoKey
        self.body = body
        self.wantsReceipt = wantsReceipt
        self.pushReceipt = pushReceipt
    }

    /// Reads a request; `header` answers a header's value by its lower-case name.
    public static func parse(header: (String) -> String?, body: [UInt8]) throws(Refusal) -> WebPushRequest {
        guard let ttlText = header("ttl")?.trimmingSpaces else {
            throw Refusal(status: 400, reason: "The TTL header is required (RFC 8030 §5.2).")
        }
        guard let ttl = Int64(ttlText), ttl >= 0 else {
            throw Refusal(status: 400, reason: "TTL must be a number of seconds, 0 or more.")
        }
        var request = WebPushRequest(ttlSeconds: min(ttl, maximumTTLSeconds), body: body)
        if let urgencyText = header("urgency")?.trimmingSpaces.lowercased() {
            guard let urgency = Urgency(rawValue: urgencyText) else {
                throw Refusal(status: 400, reason: "Urgency must be very-low, low, normal or high.")
            }
            request.urgency = urgency
        }
        if let topic = header("topic")?.trimmingSpaces {
            guard Self.isTopic(topic) else {
                throw Refusal(status: 400, reason: "Topic must be 1 to 32 characters of base64url.")
            }
            request.topic = topic
        }
        guard body.count <= maximumBodyBytes else {
            throw Refusal(status: 413, reason: "The body is larger than \(maximumBodyBytes) bytes.")
        }
        let encoding = header("content-encoding")?.trimmingSpaces.lowercased()
        switch encoding {
        case nil where body.isEmpty:
            break
        case "aes128gcm":
            guard body.count >= 21 + 65 + 17 else {
                throw Refusal(status: 400, reason: "An aes128gcm body starts with its 86-byte header (RFC 8188).")
            }
        case "aesgcm":
            guard let encryption = header("encryption"), encryption.contains("salt="),
                let cryptoKey = header("crypto-key"), cryptoKey.contains("dh=")
            else {
                throw Refusal(
                    status: 400, reason: "An aesgcm body needs Encryption: salt=… and Crypto-Key: dh=… headers.")
            }
            guard !body.isEmpty else { throw Refusal(status: 400, reason: "An aesgcm body is empty.") }
            request.encryption = encryption
            request.cryptoKey = cryptoKey
        default:
            throw Refusal(
                status: 400, reason: "Content-Encoding must be aes128gcm (RFC 8291) or aesgcm for an encrypted body.")
        }
        request.contentEncoding = encoding
        request.wantsReceipt = header("prefer")?.lowercased().contains("respond-async") ?? false
        request.pushReceipt = header("push-receipt")?.trimmingSpaces
        return request
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
