/// A project's application server key pair for Web Push (RFC 8292): the key a web app
/// subscribes its browser with (`getToken`'s `vapidKey`), with which Herald signs the
/// messages it hands to that browser's push service (SEMANTICS W1–W5). A project holds one,
/// made the first time it is asked for; it is never replaced, since every subscription made
/// with it would end.
public struct WebPushKey: Sendable, Hashable {
    public var projectID: String
    /// The P-256 private key's 32-byte scalar: never shown, never logged.
    public var privateKey: [UInt8]
    /// The public key, an uncompressed point (65 bytes).
    public var publicKey: [UInt8]
    public var createdAt: Timestamp

    public init(projectID: String, privateKey: [UInt8], publicKey: [UInt8], createdAt: Timestamp) {
        self.projectID = projectID
        self.privateKey = privateKey
        self.publicKey = publicKey
        self.createdAt = createdAt
    }

    /// The public key as web apps give it to the browser: base64url without padding.
    public var applicationServerKey: String { Base64URL.encode(publicKey) }
}
