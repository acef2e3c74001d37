public import HeraldCore
import JWTKit
import Synchronization

/// A JWT signed with a service-account key (RS256), as google-auth sends it: as the
/// `assertion` of the JWT-bearer grant, or as a self-signed bearer token.
public struct ServiceAccountAssertion: Sendable {
    /// The scopes either of which grants use of the messaging APIs.
    public static let acceptedScopes: Set<String> = [
        "https://www.googleapis.com/auth/firebase.messaging",
        "https://www.googleapis.com/auth/cloud-platform",
    ]
    /// Where an assertion may be meant for: the token endpoint (the JWT-bearer grant) or the
    /// API itself (a self-signed bearer JWT). `origins` are Herald's own (its public URL's),
    /// configured, never taken from a request: a `Host` header is the caller's to choose.
    public enum Audience: Sendable {
        case tokenEndpoint(origins: [String])
        case api(origins: [String])

        /// Google's token URLs, which google-auth and the other SDKs put in a grant's `aud`.
        static let googleTokenURLs: Set<String> = [
            "https://oauth2.googleapis.com/token", "https://accounts.google.com/o/oauth2/token",
            "https://www.googleapis.com/oauth2/v4/token",
        ]
        /// The API hosts SDKs put in a self-signed JWT's `aud` (google-auth for Python puts none).
        static let googleAPIs: Set<String> = [
            "https://fcm.googleapis.com/", "https://fcm.googleapis.com", "https://iid.googleapis.com/",
            "https://fcmdata.googleapis.com/",
        ]

        /// Whether a JWT's `aud` (nil when absent) is one this audience accepts.
        func accepts(_ audience: String?) -> Bool {
            switch self {
            case .tokenEndpoint(let origins):
                guard let audience else { return false }
                return Self.googleTokenURLs.contains(audience) || origins.contains { $0 + "/token" == audience }
            case .api(let origins):
                guard let audience else { return true }
                return Self.googleAPIs.contains(audience) || origins.contains(audience.trimmingSuffix("/"))
            }
        }
    }

    /// How far clocks may disagree, in seconds.
    static let allowedSkewSeconds: Int64 = 300

    /// Why an assertion was refused; the text goes into OAuth and v1 error bodies.
    public struct Rejection: Error, Sendable, Equatable {
        /// The OAuth 2.0 error code: `invalid_grant`, `invalid_scope` or `invalid_request`.
        public var code: String
        /// What was wrong.
        public var description: String
    }

    /// The claims Herald reads.
    struct Claims: JWTPayload {
        var iss: String?
        var sub: String?
        var scope: String?
        var aud: String?
        var iat: Int64?
        var exp: Int64?

        func verify(using algorithm: some JWTAlgorithm) async throws {
            // Time and issuer checks use Herald's clock; see `ServiceAccountAssertion.verify`.
        }
    }

    /// The key id (`kid`) in a JWT's header, read without checking the signature.
    public static func keyID(of token: String) -> String? {
        guard let headerPart = token.split(separator: ".", maxSplits: 1).first,
            let headerBytes = Base64URL.decode(headerPart),
            let header = try? JSONParser.parse(headerBytes)
        else { return nil }
        return header["kid"]?.stringValue
    }

    /// Verifying key collections by key id, each made once from its PEM: parsing the PEM and
    /// building the collection cost more than checking a signature.
    private static let collections = Mutex<[String: (pem: String, keys: JWTKeyCollection)]>([:])

    /// The collection that verifies signatures of `key`, made on first use.
    private static func collection(for key: ServiceAccountKey) async throws -> JWTKeyCollection {
        if let known = collections.withLock({ $0[key.id] }), known.pem == key.publicKeyPEM { return known.keys }
        let made = await JWTKeyCollection().add(
            rsa: try Insecure.RSA.PublicKey(pem: key.publicKeyPEM), digestAlgorithm: .sha256,
            kid: JWKIdentifier(string: key.id))
        collections.withLock { collections in
            // Only keys the directory holds come here; the bound only matters over many rotations.
            if collections.count >= 4096 { collections = [:] }
            collections[key.id] = (key.publicKeyPEM, made)
        }
        return made
    }

    /// Checks a JWT against the key named by its `kid`: the RS256 signature, the issuer,
    /// the audience, the scope and a lifetime of at most an hour. Answers when it expires.
    public static func verify(
        _ token: String, key: ServiceAccountKey, now: Timestamp, audience: Audience, requireScope: Bool = true
    ) async throws(Rejection) -> Timestamp {
        let claims: Claims
        do {
            claims = try await collection(for: key).verify(token, as: Claims.self)
        } catch {
            throw Rejection(code: "invalid_grant", description: "Invalid JWT Signature.")
        }
        guard claims.iss == key.clientEmail else {
            throw Rejection(
                code: "invalid_grant", description: "Invalid JWT: the issuer is not the key's service account.")
        }
        guard audience.accepts(claims.aud) else {
            throw Rejection(code: "invalid_grant", description: "Invalid JWT: the audience is not this server's.")
        }
        guard let issued = claims.iat, let expires = claims.exp else {
            throw Rejection(code: "invalid_grant", description: "Invalid JWT: iat and exp are required.")
        }
        let nowSeconds = now.seconds
        guard issued <= nowSeconds + allowedSkewSeconds, expires > nowSeconds - allowedSkewSeconds,
            expires > issued, expires - issued <= AccessTokens.lifetimeSeconds
        else {
            throw Rejection(
                code: "invalid_grant",
                description:
                    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
        }
        guard expires > nowSeconds else {
            throw Rejection(code: "invalid_grant", description: "Invalid JWT: the token has expired.")
        }
        if requireScope {
            let scopes = Set((claims.scope ?? "").split(separator: " ").map(String.init))
            guard !scopes.isDisjoint(with: acceptedScopes) else {
                throw Rejection(
                    code: "invalid_scope",
                    description: "The requested scopes do not include firebase.messaging or cloud-platform.")
            }
        }
        return Timestamp(seconds: expires)
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
