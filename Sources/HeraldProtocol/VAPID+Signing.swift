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
        let signer = try P256.Signing.PrivateKey(rawRepresentation: privateKey)
        let header = Base64URL.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims = JSONValue.object([
            (key: "aud", value: .string(audience)), (key: "exp", value: .number(Double(expiresAt))),
            (key: "sub", value: .string(subject)),
        ])
        let signed = header + "." + Base64URL.encode(claims.renderedBytes)
        let signature = try signer.signature(for: Data(signed.utf8))
        return
            "vapid t=\(signed).\(Base64URL.encode(Array(signature.rawRepresentation))), k=\(Base64URL.encode(publicKey))"
    }
}
