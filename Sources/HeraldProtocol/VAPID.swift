import Crypto
import Foundation
public import HeraldCore

/// Voluntary application server identification for Web Push (RFC 8292): a push service's
/// check that a push message comes from the application server a subscription was made for.
///
/// The sender signs a JWT (ES256) naming the push service's origin (`aud`), an expiry
/// (`exp`, at most 24 hours ahead) and usually a contact (`sub`), and sends it with its
/// public key: `Authorization: vapid t=<JWT>, k=<key>`, or the older draft's
/// `Authorization: WebPush <JWT>` with `Crypto-Key: p256ecdsa=<key>`.
public enum VAPID {
    /// A JWT and the public key it claims to be signed with (an uncompressed P-256 point).
    public struct Credential: Sendable, Hashable {
        public var token: String
        public var key: [UInt8]

        public init(token: String, key: [UInt8]) {
            self.token = token
            self.key = key
        }
    }

    /// Why a credential was refused; `description` says it to the sender.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The subscription was made for a key and the request carries none.
        case missing
        case malformed(String)
        case badSignature
        case expired
        case tooFarAhead
        case wrongAudience(String)
        /// Signed with a key other than the one the subscription was made for.
        case wrongKey

        public var description: String {
            switch self {
            case .missing: return "This subscription needs VAPID: Authorization: vapid t=<JWT>, k=<key>."
            case .malformed(let what): return "The VAPID credential is malformed: \(what)."
            case .badSignature: return "The VAPID JWT's signature does not verify with its key."
            case .expired: return "The VAPID JWT has expired."
            case .tooFarAhead: return "The VAPID JWT's exp is more than 24 hours ahead."
            case .wrongAudience(let audience): return "The VAPID JWT's aud \(audience) is not this push service."
            case .wrongKey: return "The VAPID key is not the one the subscription was made for."
            }
        }

        /// 403 for a valid credential this subscription does not take, 401 otherwise (RFC 8292 §4).
        public var isForbidden: Bool { self == .wrongKey }
    }

    /// The longest a JWT may stay valid (RFC 8292 §2).
    public static let maximumLifetimeSeconds: Int64 = 86_400

    /// The credential in a request's headers, or nil when it carries none.
    public static func credential(authorization: String?, cryptoKey: String?) throws(Failure) -> Credential? {
        guard let authorization = authorization.map({ trimmed($0[...]) }), !authorization.isEmpty else {
            return nil
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { throw .malformed("the Authorization header has no credential") }
        let scheme = parts[0].lowercased()
        var token: Substring?
        var keyText: Substring?
        if scheme == "vapid" {
            for parameter in parts[1].split(separator: ",") {
                let pair = trimmed(parameter).split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                if pair[0] == "t" { token = pair[1] }
                if pair[0] == "k" { keyText = pair[1] }
            }
        } else if scheme == "webpush" {
            token = trimmed(parts[1])
            keyText = cryptoKey.flatMap { parameter("p256ecdsa", in: $0) }.map { $0[...] }
        } else {
            throw .malformed("the scheme is not vapid or WebPush")
        }
        guard let token, !token.isEmpty else { throw .malformed("no JWT") }
        guard let keyText, let key = Base64URL.decode(String(trimmed(keyText, also: "\""))) else {
            throw .malformed("no public key")
        }
        return Credential(token: String(token), key: key)
    }

    /// A `name=value` parameter of a header such as `Crypto-Key` (parameters split by `;` or `,`).
    public static func parameter(_ name: String, in header: String) -> String? {
        for part in header.split(whereSeparator: { $0 == ";" || $0 == "," }) {
            let pair = trimmed(part).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == name { return String(pair[1]) }
        }
        return nil
    }

    /// `text` without the spaces and tabs (and `also`) around it; read as UTF-8, without
    /// Foundation's UTF-16 round trip, which cost a push more than the rest of its parsing.
    static func trimmed(_ text: Substring, also extra: Character? = nil) -> Substring {
        let isPadding: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == extra }
        guard let first = text.firstIndex(where: { !isPadding($0) }),
            let last = text.lastIndex(where: { !isPadding($0) })
        else { return text[text.endIndex...] }
        return text[first...last]
    }

    /// Checks a credential: an ES256 JWT signed by `credential.key`, for one of `audiences`
    /// (origins such as `https://push.example.com`), not expired at `now` nor valid for more
    /// than 24 hours; and, when the subscription was made for `subscriptionKey`, signed by
    /// that key. Answers the JWT's `sub`, if any.
    @discardableResult
    public static func verify(
        _ credential: Credential, audiences: Set<String>, subscriptionKey: [UInt8]?, now: Timestamp
    ) throws(Failure) -> String? {
        try signedClaims(credential, audiences: audiences).check(credential, subscriptionKey: subscriptionKey, now: now)
    }

    /// What a credential's signature vouches for, checked once: when it expires and whom it names.
    public struct Claims: Sendable {
        public var expiry: Int64
        public var subject: String?

        /// The checks that depend on the moment and the subscription: answers `subject`.
        public func check(_ credential: Credential, subscriptionKey: [UInt8]?, now: Timestamp) throws(Failure)
            -> String?
        {
            guard expiry > now.seconds else { throw .expired }
            guard expiry <= now.seconds + maximumLifetimeSeconds else { throw .tooFarAhead }
            if let subscriptionKey, subscriptionKey != credential.key { throw .wrongKey }
            return subject
        }
    }

    /// Verifies a credential's signature and reads its claims: the costly part of `verify`,
    /// the same for every use of one JWT with one key.
    public static func signedClaims(_ credential: Credential, audiences: Set<String>) throws(Failure) -> Claims {
        let segments = credential.token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(String(segments[0])),
            let claimBytes = Base64URL.decode(String(segments[1])),
            let signatureBytes = Base64URL.decode(String(segments[2]))
        else { throw .malformed("not a JWT") }
        guard let header = try? JSONParser.parse(headerBytes), header["alg"]?.stringValue == "ES256" else {
            throw .malformed("the JWT's alg is not ES256")
        }
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: credential.key) else {
            throw .malformed("the key is not an uncompressed P-256 point")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: Data((segments[0] + "." + segments[1]).utf8))
        else { throw .badSignature }
        guard let claims = try? JSONParser.parse(claimBytes), case .object = claims else {
            throw .malformed("the JWT's claims are not a JSON object")
        }
        guard let audience = claims["aud"]?.stringValue else { throw .malformed("no aud") }
        guard audiences.contains(audience.hasSuffix("/") ? String(audience.dropLast()) : audience) else {
            throw .wrongAudience(audience)
        }
        guard let exp = claims["exp"]?.numberValue else { throw .malformed("no exp") }
        return Claims(expiry: Int64(exp), subject: claims["sub"]?.stringValue)
    }
}
