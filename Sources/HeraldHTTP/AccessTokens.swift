import Crypto
public import HeraldCore

/// Who made an authenticated request.
public struct Caller: Sendable, Hashable {
    /// The project whose service account signed the credentials.
    public var projectID: String
    /// The service-account key behind them.
    public var keyID: String
}

/// Short-lived OAuth 2.0 access tokens (SEMANTICS C4), signed with a server secret so
/// that checking one needs no database read.
///
/// Form: `ya29.h1.<base64url payload>.<base64url HMAC-SHA256>`, the payload being
/// `projectID|keyID|issued|expires` in epoch seconds.
public struct AccessTokens: Sendable {
    /// How long a token lives: one hour.
    public static let lifetimeSeconds: Int64 = 3600
    static let prefix = "ya29.h1."

    private let key: SymmetricKey

    /// Tokens signed with the given secret (at least 32 bytes).
    public init(secret: [UInt8]) {
        key = SymmetricKey(data: secret)
    }

    /// A new token for a caller, valid from `now` for an hour.
    public func issue(for caller: Caller, now: Timestamp) -> String {
        let payload = "\(caller.projectID)|\(caller.keyID)|\(now.seconds)|\(now.seconds + Self.lifetimeSeconds)"
        let mac = HMAC<SHA256>.authenticationCode(for: Array(payload.utf8), using: key)
        return Self.prefix + Base64URL.encode(payload.utf8) + "." + Base64URL.encode(mac)
    }

    /// The caller a token was issued to, when its signature is good and it has not expired.
    public func verify(_ token: String, now: Timestamp) -> Caller? {
        guard token.hasPrefix(Self.prefix) else { return nil }
        let rest = token.utf8.dropFirst(Self.prefix.utf8.count)
        guard let dot = rest.firstIndex(of: UInt8(ascii: ".")),
            let payload = Base64URL.decode(Substring(rest[..<dot])),
            let mac = Base64URL.decode(Substring(rest[rest.index(after: dot)...])),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: payload, using: key)
        else { return nil }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: "|", omittingEmptySubsequences: false)
        guard fields.count == 4, let expires = Int64(fields[3]), now.seconds < expires else { return nil }
        return Caller(projectID: String(fields[0]), keyID: String(fields[1]))
    }
}
