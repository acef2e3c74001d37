import Crypto
import HeraldCore
import HeraldProtocol
import Testing

/// A push service's VAPID checks with each JWT's signature verified once: what is
/// remembered never lets through what `VAPID.verify` would refuse.
@Suite struct VAPIDVerifierTests {
    let signer = VAPIDTests()

    @Test func aRememberedJWTIsRefusedOnceExpiredAndForAnotherSubscriptionsKey() throws {
        let verifier = VAPIDVerifier(audiences: signer.audiences)
        let credential = signer.credential(try signer.jwt(exp: signer.now.seconds + 60))
        #expect(try verifier.verify(credential, subscriptionKey: signer.publicKey, now: signer.now) != nil)
        #expect(verifier.count == 1)
        // Remembered: still checked against the subscription's key and the clock.
        let other = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(throws: VAPID.Failure.wrongKey) {
            try verifier.verify(credential, subscriptionKey: other, now: signer.now)
        }
        #expect(throws: VAPID.Failure.expired) {
            try verifier.verify(credential, subscriptionKey: nil, now: signer.now.adding(seconds: 60))
        }
    }

    @Test func aJWTChangedInAnyByteOrClaimedForAnotherKeyIsVerifiedAfresh() throws {
        let verifier = VAPIDVerifier(audiences: signer.audiences)
        let token = try signer.jwt()
        try verifier.verify(signer.credential(token), subscriptionKey: nil, now: signer.now)
        var tampered = Array(token.utf8)
        tampered[tampered.count - 2] =
            tampered[tampered.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: VAPID.Failure.badSignature) {
            try verifier.verify(
                signer.credential(String(decoding: tampered, as: UTF8.self)), subscriptionKey: nil, now: signer.now)
        }
        // The same JWT presented with another key is not the remembered credential.
        let stranger = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(throws: VAPID.Failure.badSignature) {
            try verifier.verify(VAPID.Credential(token: token, key: stranger), subscriptionKey: nil, now: signer.now)
        }
        #expect(verifier.count == 1)
    }

    @Test func pastItsCapacityTheVerifierForgetsExpiredJWTsFirst() throws {
        let verifier = VAPIDVerifier(audiences: signer.audiences, capacity: 2)
        let shortLived = signer.credential(try signer.jwt(exp: signer.now.seconds + 10))
        let longLived = signer.credential(try signer.jwt(exp: signer.now.seconds + 3600))
        try verifier.verify(shortLived, subscriptionKey: nil, now: signer.now)
        try verifier.verify(longLived, subscriptionKey: nil, now: signer.now)
        let later = signer.now.adding(seconds: 20)
        try verifier.verify(
            signer.credential(try signer.jwt(exp: later.seconds + 3600)), subscriptionKey: nil, now: later)
        #expect(verifier.count == 2)
    }
}
