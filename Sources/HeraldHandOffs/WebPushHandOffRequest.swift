import Crypto
public import HeraldCore
import HeraldProtocol

/// The Web Push request (RFC 8030) that hands one queue entry to a browser's push service
/// (SEMANTICS W2): the entry's body, sealed with `aes128gcm` when it was queued, posted to the
/// registration's endpoint with the time to live that is left, an `Urgency` (the sender's
/// `webpush.headers`, else the message's priority) and a `Topic` (the sender's, else one made
/// from the collapse key).
public struct WebPushHandOffRequest: Sendable, Equatable {
    /// The endpoint's path at its push service.
    public var path: String
    /// `ttl`, `urgency` and, when there is one, `topic`.
    public var headers: [(String, String)]
    public var body: [UInt8]

    /// Why an entry cannot be handed off.
    public struct Unusable: Error, Sendable, Equatable {}

    /// RFC 8030's urgencies.
    static let urgencies: Set<String> = ["very-low", "low", "normal", "high"]

    public init(_ entry: QueuedMessage, endpoint: String, now: Timestamp) throws(Unusable) {
        guard let stanza = try? McsProto_DataMessageStanza(serializedBytes: entry.stanza),
            stanza.appData.contains(where: { $0.key == "content-encoding" && $0.value == "aes128gcm" })
        else { throw Unusable() }
        path = String(endpoint.dropFirst(WebOrigin.of(endpoint).count))
        body = Array(stanza.rawData)
        let left = stanza.ttl == 0 ? 0 : max(0, (entry.expiresAt.milliseconds - now.milliseconds) / 1000)
        let chosen = { (key: String) in stanza.appData.first { $0.key == key }?.value }
        let urgency = chosen("urgency").flatMap { Self.urgencies.contains($0) ? $0 : nil }
        headers = [("ttl", String(left)), ("urgency", urgency ?? (entry.isHighPriority ? "high" : "normal"))]
        let topic = chosen("topic").flatMap { Self.topic($0) } ?? entry.collapseKey.flatMap(Self.topic(collapseKey:))
        if let topic { headers.append(("topic", topic)) }
    }

    /// A `Topic` as RFC 8030 takes it: at most 32 characters of base64url.
    static func topic(_ text: String) -> String? {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy(Base64URL.isAlphabet) ? text : nil
    }

    /// The `Topic` of a collapse key: the key itself when it is one, else 32 characters of
    /// its SHA-256, so that messages with one collapse key replace each other at the service.
    static func topic(collapseKey: String) -> String? {
        guard !collapseKey.isEmpty else { return nil }
        return topic(collapseKey)
            ?? String(Base64URL.encode(Array(SHA256.hash(data: Array(collapseKey.utf8)))).prefix(32))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.path == rhs.path && lhs.body == rhs.body && lhs.headers.elementsEqual(rhs.headers) { $0 == $1 }
    }
}
