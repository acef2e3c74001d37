import Crypto
import Foundation
public import HeraldCore

/// The application server's side of VAPID (RFC 8292): a key pair, and the header that signs
/// pushes to one push service with it.
extension VAPID {
    /// A new key pair for `projectID`.
    public static func makeKey(projectID: String, at time: Timestamp) -> WebPushKey {
        let key = P256.Signing.PrivateKey()
        return WebPushKey(
            projectID: projectID, privateKey: Array(key.rawRepresentation),
            publicKey: Array(key.publicKey.x963Representation), createdAt: time)
    }

    /// `vapid t=<JWT>, k=<key>` for pushes to `audience` (the push service's origin) until
    /// `expiresAt` (seconds since the epoch), naming `subject` (a `mailto:` or `https:` contact).
    public static func authorization(
        privateKey: [UInt8], publicKey: [UInt8], audience: String, subject: String, expiresAt: Int64
    ) throws -> String {
        let token = try ES256JWT.sign(
            header: [(key: "typ", value: .string("JWT"))],
            claims: [
                (key: "aud", value: .string(audience)), (key: "exp", value: .number(Double(expiresAt))),
                (key: "sub", value: .string(subject)),
            ],
            with: try P256.Signing.PrivateKey(rawRepresentation: privateKey))
        return "vapid t=\(token), k=\(Base64URL.encode(publicKey))"
    }
}
