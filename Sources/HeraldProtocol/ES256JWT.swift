public import Crypto
import Foundation
public import HeraldCore

/// A JSON Web Token signed with ES256 (RFC 7515's compact form, RFC 7518 §3.4): base64url
/// header, claims and P-256 signature (r‖s), joined by dots. VAPID's and APNs' provider
/// tokens are these; signing one is synchronous, and takes no task.
public enum ES256JWT {
    public static func sign(
        header: [(key: String, value: JSONValue)], claims: [(key: String, value: JSONValue)],
        with key: P256.Signing.PrivateKey
    ) throws -> String {
        let signed =
            Base64URL.encode(JSONValue.object([(key: "alg", value: .string("ES256"))] + header).renderedBytes) + "."
            + Base64URL.encode(JSONValue.object(claims).renderedBytes)
        let signature = try key.signature(for: Data(signed.utf8))
        return signed + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}
