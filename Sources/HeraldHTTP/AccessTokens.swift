import Crypto
public import HeraldCore
public import HeraldStorage
import Synchronization

/// Who made an authenticated request.
public struct Caller: Sendable, Hashable {
    /// The project whose service account signed the credentials.
    public var projectID: String
    /// The service-account key behind them.
    public var keyID: String
}

/// Short-lived tokens signed with a server secret, so that checking one needs no
/// database read: OAuth 2.0 access tokens (SEMANTICS C4) and Firebase installation auth
/// tokens.
///
/// Form: `<prefix><base64url payload>.<base64url HMAC-SHA256>`, the payload being
/// `field|field|issued|expires` in epoch seconds; the prefix names the purpose and is
/// covered by the MAC. A token whose lifetime is longer than this server issues is refused
/// even when its signature is good. After the secret is rotated, tokens signed with the
/// previous one are accepted for at most `SecretRotation.overlapSeconds` more.
public final class AccessTokens: Sendable {
    /// How long an access token lives: one hour.
    public static let lifetimeSeconds: Int64 = 3600
    /// How long an installation auth token lives: one week.
    public static let installationLifetimeSeconds: Int64 = 7 * 86400
    static let accessPrefix = "ya29.h1."
    static let installationPrefix = "eyFIS.h1."

    private struct Keys {
        var current: SymmetricKey
        var previous: (key: SymmetricKey, acceptedUntil: Timestamp)?
    }

    private let keys: Mutex<Keys>

    /// Tokens signed with the given secret (at least 32 bytes).
    public convenience init(secret: [UInt8]) {
        self.init(rotation: SecretRotation(current: secret, previous: nil))
    }

    /// Tokens signed with a secret, the previous one still accepted for a while.
    public init(rotation: SecretRotation) {
        keys = Mutex(Self.keys(rotation))
    }

    /// Signs with a rotated secret from now on.
    public func use(_ rotation: SecretRotation) {
        keys.withLock { $0 = Self.keys(rotation) }
    }

    private static func keys(_ rotation: SecretRotation) -> Keys {
        Keys(
            current: SymmetricKey(data: rotation.current),
            previous: rotation.previous.map { (SymmetricKey(data: $0.value), $0.acceptedUntil) })
    }

    /// A new access token for a caller, valid from `now` for an hour.
    public func issue(for caller: Caller, now: Timestamp) -> String {
        sign(
            prefix: Self.accessPrefix, fields: [caller.projectID, caller.keyID], now: now,
            lifetime: Self.lifetimeSeconds)
    }

    /// The caller an access token was issued to, when its signature is good and it has not expired.
    public func verify(_ token: String, now: Timestamp) -> Caller? {
        verifyUntil(token, now: now)?.caller
    }

    /// The caller an access token was issued to and when the token expires, when its
    /// signature is good and it has not expired.
    public func verifyUntil(_ token: String, now: Timestamp) -> (caller: Caller, expires: Timestamp)? {
        guard
            let (fields, expires) = open(
                token, prefix: Self.accessPrefix, lifetime: Self.lifetimeSeconds, now: now),
            fields.count == 2
        else { return nil }
        return (Caller(projectID: fields[0], keyID: fields[1]), expires)
    }

    /// A new installation auth token for a project's installation.
    public func issueInstallationToken(projectID: String, fid: String, now: Timestamp) -> String {
        sign(
            prefix: Self.installationPrefix, fields: [projectID, fid], now: now,
            lifetime: Self.installationLifetimeSeconds)
    }

    /// The project and installation id an installation auth token was issued for.
    public func verifyInstallationToken(_ token: String, now: Timestamp) -> (projectID: String, fid: String)? {
        guard
            let (fields, _) = open(
                token, prefix: Self.installationPrefix, lifetime: Self.installationLifetimeSeconds, now: now),
            fields.count == 2
        else { return nil }
        return (fields[0], fields[1])
    }

    private func sign(prefix: String, fields: [String], now: Timestamp, lifetime: Int64) -> String {
        let payload = (fields + ["\(now.seconds)", "\(now.seconds + lifetime)"]).joined(separator: "|")
        let encoded = Base64URL.encode(payload.utf8)
        let key = keys.withLock { $0.current }
        let mac = HMAC<SHA256>.authenticationCode(for: Array((prefix + encoded).utf8), using: key)
        return prefix + encoded + "." + Base64URL.encode(mac)
    }

    /// The signed fields before the two times, and the expiry: nil unless the MAC is good
    /// (current secret, or the previous one while it is still accepted), the token has not
    /// expired, and it lives no longer than `lifetime` from an issue time not in the future.
    private func open(_ token: String, prefix: String, lifetime: Int64, now: Timestamp)
        -> (fields: [String], expires: Timestamp)?
    {
        guard token.hasPrefix(prefix) else { return nil }
        let rest = token.utf8.dropFirst(prefix.utf8.count)
        guard let dot = rest.firstIndex(of: UInt8(ascii: ".")),
            let mac = Base64URL.decode(Substring(rest[rest.index(after: dot)...])),
            let payload = Base64URL.decode(Substring(rest[..<dot]))
        else { return nil }
        let signed = Array(prefix.utf8) + Array(rest[..<dot])
        let keys = keys.withLock { $0 }
        var valid = HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: signed, using: keys.current)
        if !valid, let previous = keys.previous, now < previous.acceptedUntil {
            valid = HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: signed, using: previous.key)
        }
        guard valid else { return nil }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: "|", omittingEmptySubsequences: false)
            .map(String.init)
        guard fields.count >= 2, let issued = Int64(fields[fields.count - 2]),
            let expires = Int64(fields[fields.count - 1]), now.seconds < expires, expires - issued <= lifetime,
            issued <= now.seconds + 60
        else { return nil }
        return (Array(fields.dropLast(2)), Timestamp(seconds: expires))
    }
}
