public import HeraldCore
import Synchronization

/// Turns an `Authorization: Bearer …` header into a `Caller` without a database read:
/// either an access token from `/token`, or a JWT the service account signed itself
/// (google-auth's self-signed mode). A verified token is remembered until it expires, so a
/// caller's later requests cost a dictionary look-up instead of a signature check.
public final class Authenticator: Sendable {
    private let directory: CredentialDirectory
    private let tokens: AccessTokens
    private let clock: any HeraldClock
    /// Herald's own origins (`--public-url`'s), which assertions may name as their audience.
    public let ownOrigins: [String]
    private let verified: Mutex<[String: (caller: Caller, expires: Timestamp)]> = Mutex([:])
    private static let cacheLimit = 10_000

    public init(directory: CredentialDirectory, tokens: AccessTokens, clock: any HeraldClock, publicURL: String? = nil)
    {
        self.ownOrigins = publicURL.map { [WebOrigin.of($0)] } ?? []
        self.directory = directory
        self.tokens = tokens
        self.clock = clock
    }

    /// The caller behind an Authorization header value; throws `UNAUTHENTICATED`.
    public func authenticate(authorization: String?) async throws(HeraldError) -> Caller {
        guard let token = Self.bearerToken(authorization) else {
            throw HeraldError.unauthenticated(
                "Request is missing required authentication credential. Expected OAuth 2 access token.")
        }
        let now = clock.now()
        var caller = knownCaller(token, now: now)
        if caller == nil { caller = await selfSignedCaller(token, now: now) }
        guard let caller, await isActive(caller) else {
            throw HeraldError.unauthenticated(
                "Request had invalid authentication credentials. Expected OAuth 2 access token.")
        }
        return caller
    }

    /// The caller, when the caller may act on the project a URL names; throws
    /// `UNAUTHENTICATED` or `PERMISSION_DENIED`.
    public func authorize(authorization: String?, projectName: some StringProtocol)
        async throws(HeraldError) -> (Caller, Project)
    {
        let caller = try await authenticate(authorization: authorization)
        guard let project = await directory.find({ $0.project(named: projectName, for: caller) }) else {
            throw HeraldError.permissionDenied("The caller does not have permission")
        }
        return (caller, project)
    }

    /// The project a URL names, when the header's credentials may act on it and can be
    /// checked without waiting: an access token, or a self-signed JWT verified before. Nil
    /// otherwise, and then the request goes the usual way through `authorize`.
    public func authorizeWithoutWaiting(authorization: String?, projectName: some StringProtocol) -> Project? {
        guard let token = Self.bearerToken(authorization), let caller = knownCaller(token, now: clock.now()),
            directory.isActive(caller)
        else { return nil }
        return directory.project(named: projectName, for: caller)
    }

    /// The project behind a legacy surface's credentials: `Authorization: key=<server key>`
    /// (SEMANTICS C5) or a bearer token.
    public func legacyProject(authorization: String?) async throws(HeraldError) -> Project {
        if let authorization, authorization.lowercased().hasPrefix("key=") {
            let serverKey = String(authorization.dropFirst(4))
            guard let project = await directory.find({ $0.project(serverKey: serverKey) }) else {
                throw HeraldError.unauthenticated("The server key is not valid.")
            }
            return project
        }
        let caller = try await authenticate(authorization: authorization)
        guard let project = await directory.find({ $0.project(named: caller.projectID) }) else {
            throw HeraldError.unauthenticated("The credentials' project does not exist.")
        }
        return project
    }

    /// The token of `Bearer <token>` (the scheme in any case). Compared as bytes: `count`
    /// and `prefix` on strings walk characters.
    static func bearerToken(_ authorization: String?) -> String? {
        guard let utf8 = authorization?.utf8, utf8.count > 7,
            zip(utf8.prefix(7), "bearer ".utf8).allSatisfy({ $0 == $1 || $0 | 0x20 == $1 && $1 != UInt8(ascii: " ") })
        else { return nil }
        let token = utf8.dropFirst(7).drop { $0 == UInt8(ascii: " ") }
        return token.isEmpty ? nil : String(Substring(token))
    }

    /// The caller of a token that needs no public-key signature check now: an access
    /// token (checked with the server's secret, then remembered), or a token verified
    /// before and not yet expired.
    private func knownCaller(_ token: String, now: Timestamp) -> Caller? {
        if let cached = verified.withLock({ $0[token] }) { return cached.expires > now ? cached.caller : nil }
        guard let (caller, expires) = tokens.verifyUntil(token, now: now) else { return nil }
        remember(token, caller: caller, expires: expires)
        return caller
    }

    private func remember(_ token: String, caller: Caller, expires: Timestamp) {
        verified.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[token] = (caller, expires)
        }
    }

    /// A revoked key or a deleted project ends its tokens at once; a key created a moment
    /// ago is looked for in the store.
    private func isActive(_ caller: Caller) async -> Bool {
        await directory.find { $0.isActive(caller) ? true : nil } ?? false
    }

    private func selfSignedCaller(_ token: String, now: Timestamp) async -> Caller? {
        guard token.utf8.count < 8192, let keyID = ServiceAccountAssertion.keyID(of: token),
            let key = await directory.find({ $0.activeKey(id: keyID) }),
            let expires = try? await ServiceAccountAssertion.verify(
                token, key: key, now: now, audience: .api(origins: ownOrigins))
        else { return nil }
        let caller = Caller(projectID: key.projectID, keyID: keyID)
        remember(token, caller: caller, expires: expires)
        return caller
    }
}
