import Crypto
import Foundation
import HeraldCore
import HeraldProtocol
import Testing

/// VAPID (RFC 8292): a JWT signed with ES256 by the application server's key, for the push
/// service's origin, valid at most a day, and from the key a subscription was made for.
@Suite struct VAPIDTests {
    let key = P256.Signing.PrivateKey()
    let now = Timestamp(seconds: 1_800_000_000)
    let audiences: Set<String> = ["https://push.example.com"]

    var publicKey: [UInt8] { Array(key.publicKey.x963Representation) }

    func jwt(
        aud: String = "https://push.example.com", exp: Int64? = nil, alg: String = "ES256",
        signer: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        let header = Base64URL.encode(Array(#"{"typ":"JWT","alg":"\#(alg)"}"#.utf8))
        let claims = Base64URL.encode(
            Array(#"{"aud":"\#(aud)","exp":\#(exp ?? now.seconds + 3600),"sub":"mailto:ops@example.com"}"#.utf8))
        let signed = header + "." + claims
        let signature = try (signer ?? key).signature(for: Data(signed.utf8))
        return signed + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    func credential(_ token: String) -> VAPID.Credential {
        VAPID.Credential(token: token, key: publicKey)
    }

    @Test func aGoodCredentialVerifiesAndNamesItsSender() throws {
        let subject = try VAPID.verify(
            credential(try jwt()), audiences: audiences, subscriptionKey: publicKey, now: now)
        #expect(subject == "mailto:ops@example.com")
        // A channel made without a key takes any valid credential; an aud with a trailing slash is the origin.
        try VAPID.verify(
            credential(try jwt(aud: "https://push.example.com/")), audiences: audiences, subscriptionKey: nil, now: now)
    }

    @Test func expiredTooLongWrongAudienceWrongKeyAndBadSignatureAreRefused() throws {
        #expect(throws: VAPID.Failure.expired) {
            try VAPID.verify(
                credential(try jwt(exp: now.seconds - 1)), audiences: audiences, subscriptionKey: nil, now: now)
        }
        #expect(throws: VAPID.Failure.tooFarAhead) {
            try VAPID.verify(
                credential(try jwt(exp: now.seconds + 86_401)), audiences: audiences, subscriptionKey: nil, now: now)
        }
        #expect(throws: VAPID.Failure.wrongAudience("https://fcm.googleapis.com")) {
            try VAPID.verify(
                credential(try jwt(aud: "https://fcm.googleapis.com")), audiences: audiences, subscriptionKey: nil,
                now: now)
        }
        let other = P256.Signing.PrivateKey()
        // Signed by its own key, valid, but not the key the subscription was made for: 403.
        let foreign = VAPID.Credential(token: try jwt(signer: other), key: Array(other.publicKey.x963Representation))
        #expect(throws: VAPID.Failure.wrongKey) {
            try VAPID.verify(foreign, audiences: audiences, subscriptionKey: publicKey, now: now)
        }
        #expect(VAPID.Failure.wrongKey.isForbidden && !VAPID.Failure.expired.isForbidden)
        // Claims to be signed by our key but is not.
        #expect(throws: VAPID.Failure.badSignature) {
            try VAPID.verify(credential(try jwt(signer: other)), audiences: audiences, subscriptionKey: nil, now: now)
        }
        var tampered = try jwt()
        tampered.replaceSubrange(tampered.index(tampered.endIndex, offsetBy: -4)..., with: "AAAA")
        #expect(throws: VAPID.Failure.badSignature) {
            try VAPID.verify(credential(tampered), audiences: audiences, subscriptionKey: nil, now: now)
        }
        #expect(throws: VAPID.Failure.malformed("the JWT's alg is not ES256")) {
            try VAPID.verify(credential(try jwt(alg: "none")), audiences: audiences, subscriptionKey: nil, now: now)
        }
    }

    @Test func bothHeaderFormsAreRead() throws {
        let token = try jwt()
        let key = Base64URL.encode(publicKey)
        #expect(
            try VAPID.credential(authorization: "vapid t=\(token), k=\(key)", cryptoKey: nil)
                == VAPID.Credential(token: token, key: publicKey))
        #expect(
            try VAPID.credential(authorization: "WebPush \(token)", cryptoKey: "dh=BAAA;p256ecdsa=\(key)")
                == VAPID.Credential(token: token, key: publicKey))
        #expect(try VAPID.credential(authorization: nil, cryptoKey: nil) == nil)
        #expect(throws: VAPID.Failure.self) { try VAPID.credential(authorization: "Bearer x", cryptoKey: nil) }
        #expect(throws: VAPID.Failure.self) { try VAPID.credential(authorization: "vapid t=\(token)", cryptoKey: nil) }
    }
}
