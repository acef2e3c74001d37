import Crypto
public import HeraldCore

/// Names of Web Push receipt subscriptions (RFC 8030 §5.1) that carry the sender they were
/// made for: 16 random bytes, then 16 bytes of SHA-256 over them and the sender's VAPID
/// public key. A sender may name only a subscription made for its own key in a
/// `Push-Receipt`, so knowing another sender's receipt URL gives no way to add receipts
/// there; a sender without a key has its own, keyless, subscriptions.
public enum ReceiptSubscription {
    /// A new subscription for the sender with `senderKey` (empty for none).
    public static func make(senderKey: [UInt8]) -> String {
        let nonce = SecureRandom.bytes(16)
        return Base64URL.encode(nonce + tag(nonce: nonce, senderKey: senderKey))
    }

    /// Whether `subscription` was made for the sender with `senderKey`.
    public static func belongs(_ subscription: String, toSenderKey senderKey: [UInt8]) -> Bool {
        guard let bytes = Base64URL.decode(subscription), bytes.count == 32 else { return false }
        return Array(bytes.suffix(16)).constantTimeEquals(tag(nonce: Array(bytes.prefix(16)), senderKey: senderKey))
    }

    private static func tag(nonce: [UInt8], senderKey: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: Array("herald push receipts".utf8))
        hash.update(data: nonce)
        hash.update(data: senderKey)
        return Array(hash.finalize().prefix(16))
    }
}
