public import HeraldCore
import Synchronization

/// Checks VAPID credentials (RFC 8292) for one push service, verifying each JWT's signature
/// once per key: a sender signs one JWT and uses it for many pushes until it expires, and the
/// ES256 verification is most of what a push costs. What is remembered is only what the
/// signature vouched for (`VAPID.Claims`); the expiry and the subscription's key are checked
/// on every use, so a remembered JWT is refused the moment it expires.
public final class VAPIDVerifier: Sendable {
    /// The origins a JWT's `aud` may name.
    public let audiences: Set<String>
    /// How many verified JWTs are remembered; past it, expired ones are forgotten, and all
    /// of them if none has expired.
    public let capacity: Int
    private let verified = Mutex<[VAPID.Credential: VAPID.Claims]>([:])

    public init(audiences: Set<String>, capacity: Int = 10_000) {
        self.audiences = audiences
        self.capacity = capacity
    }

    /// `VAPID.verify` with this service's audiences, without verifying a signature twice.
    @discardableResult
    public func verify(_ credential: VAPID.Credential, subscriptionKey: [UInt8]?, now: Timestamp) throws(VAPID.Failure)
        -> String?
    {
        if let claims = verified.withLock({ $0[credential] }) {
            return try claims.check(credential, subscriptionKey: subscriptionKey, now: now)
        }
        let claims = try VAPID.signedClaims(credential, audiences: audiences)
        let subject = try claims.check(credential, subscriptionKey: subscriptionKey, now: now)
        verified.withLock { verified in
            if verified.count >= capacity {
                verified = verified.filter { $0.value.expiry > now.seconds }
                if verified.count >= capacity { verified.removeAll(keepingCapacity: true) }
            }
            verified[credential] = claims
        }
        return subject
    }

    /// How many verified JWTs are remembered.
    public var count: Int { verified.withLock { $0.count } }
}
