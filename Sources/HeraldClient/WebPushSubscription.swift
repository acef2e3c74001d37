/// A Web Push subscription of this device (RFC 8030): the push channel's endpoint, which
/// any Web Push library posts to, and the keys it encrypts to (RFC 8291). The private key
/// never leaves the device, so the push service carries bytes it cannot read.
public struct WebPushSubscription: Codable, Sendable, Equatable {
    /// The push channel's token, and the URL application servers post to.
    public var token: String
    public var endpoint: String
    /// The channel's `subtype`, which marks its messages on the connection.
    public var subtype: String
    /// The application server key the channel was made for (base64url), if any.
    public var applicationServerKey: String?
    /// The P-256 public key (uncompressed, base64url) and auth secret (base64url) senders
    /// encrypt to: the `keys` of a browser's `PushSubscription`.
    public var p256dh: String
    public var auth: String
    /// The P-256 private key (raw, base64url).
    public var privateKey: String

    /// The `register3` sender of a channel made without an application server key: one no
    /// VAPID key is, so that any sender may post.
    static let keylessSender = "herald-web-push"

    /// The `register3` sender the channel was made with.
    var sender: String { applicationServerKey ?? Self.keylessSender }
}
