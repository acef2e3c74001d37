import Crypto
public import HeraldCore
import HeraldProtocol

/// The Web Push request (RFC 8030) that hands one queue entry to a browser's push service
/// (SEMANTICS W2): the entry's body, sealed with `aes128gcm` when it was queued, posted to the
/// registration's endpoint with the time to live that is left, an `Urgency` (the sender's
/// `webpush.headers`, else the message's priority) and a `Topic` (the sender's, else one made
/// from the collapse key).
public struct WebPushHandOffRequest: Sendable {
    /// The endpoint's path at its push service.
    public var path: String
    /// `ttl`, `urgency` and, when there is one, `topic`.
    public var headers: [(String, String)]
    public var body: [UInt8]

    /// Why an entry cannot be handed off.
    public struct Unusable: Error, Sendable, Equatable {}

    public init(_ entry: QueuedMessage, endpoint: String, now: Timestamp) throws(Unusable) {
        guard let stanza = try? McsProto_DataMessageStanza(serializedBytes: entry.stanza),
            stanza.appData.contains(where: { $0.key == "content-encoding" && $0.value == "aes128gcm" })
        else { throw Unusable() }
        path = String(endpoint.dropFirst(WebOrigin.of(endpoint).count))
        body = Array(stanza.rawData)
        let left = stanza.ttl == 0 ? 0 : max(0, (entry.expiresAt.milliseconds - now.milliseconds) / 1000)
        let chosen = { (key: String) in stanza.appData.first { $0.key == key }?.value }
        let urgency = chosen("urgency").flatMap(WebPushRequest.Urgency.init(rawValue:))
        headers = [("ttl", String(left)), ("urgency", (urgency ?? (entry.isHighPriority ? .high : .normal)).rawValue)]
        let topic =
            chosen("topic").flatMap { WebPushRequest.isTopic($0) ? $0 : nil }
            ?? entry.collapseKey.flatMap(Self.topic(collapseKey:))
        if let topic { headers.append(("topic", topic)) }
    }

    /// The `Topic` of a collapse key: the key itself when it is one, else 32 characters of
    /// its SHA-256, so that messages with one collapse key replace each other at the service.
    static func topic(collapseKey: String) -> String? {
        guard !collapseKey.isEmpty else { return nil }
        if WebPushRequest.isTopic(collapseKey) { return collapseKey }
        return String(Base64URL.encode(Array(SHA256.hash(data: Array(collapseKey.utf8)))).prefix(32))
    }
}
