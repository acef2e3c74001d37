public import HeraldCore
import Synchronization

/// Turns an `Authorization: Bearer …` header into a `Caller` without a database read:
/// either an access token from `/token`, or a JWT the service account signed itself
/// (google-auth's self-signed mode), whose verification is cached until it expires.
public final class Authenticator: Sendable {
    private let directory: CredentialDirectory
    private let tokens: AccessTokens
    private let clock: any HeraldClock
    private let verifiedJWTs: Mutex<[String: (caller: Caller, expires: Timestamp)]> = Mutex([:])
    private static let cacheLimit = 10_000

    public init(directory: CredentialDirectory, tokens: AccessTokens, clock: any HeraldClock) {
        self.directory = directory
        self.tokens = tokens
        self.clock = clock
    }

    /// The caller behind an Authorization header value; throws `UNAUTHENTICATED`.
    public func authenticate(authorization: String?) async throws(HeraldError) -> Caller {
        guard let authorization, authorization.count > 7,
            authorization.prefix(7).lowercased() == "bearer "
        else {
            throw HeraldError.unauthenticated(
                "Request is missing required authentication credential. Expected OAuth 2 access token.")
        }
        let token = String(authorization.dropFirst(7).drop { $0 == " " })
        let now = clock.now()
        let caller: Caller?
        if let access = tokens.verify(token, now: now) {
            caller = access
        } else {
            caller = await selfSignedCaller(token, now: now)
        }
        // A revoked key or a deleted project ends its tokens at once.
        guard let caller, directory.activeKey(id: caller.keyID)?.projectID == caller.projectID else {
            throw HeraldError.unauthenticated(
                "Request had invalid authentication credentials. Expected OAuth 2 access token.")
        }
        return caller
    }

    /// The caller, when the caller may act on the project a URL names; throws
    /// `UNAUTHENTICATED` or `PERMISSION_DENIED`.
    public func authorize(authorization: String?, projectName: some StringProtocol) async throws(HeraldError)
        -> (Caller, Project)
    {
        let caller = try await authenticate(authorization: authorization)
        guard let project = directory.project(named: projectName), project.id == caller.projectID else {
            throw HeraldError.permissionDenied("The caller does not have permission")
        }
        return (caller, project)
    }

    /// The project behind a legacy surface's credentials: `Authorization: key=<server key>`
    /// (SEMANTICS C5) or a bearer token.
    public func legacyProject(authorization: String?) async throws(HeraldError) -> Project {
        if let authorization, authorization.lowercased().hasPrefix("key=") {
            guard let project = directory.project(serverKey: String(authorization.dropFirst(4))) else {
                throw HeraldError.unauthenticated("The server key is not valid.")
            }
            return project
        }
        let caller = try await authenticate(authorization: authorization)
        guard let project = directory.project(named: caller.projectID) else {
            throw HeraldError.unauthenticated("The credentials' project does not exist.")
        }
        return project
    }

    private func selfSignedCaller(_ token: String, now: Timestamp) async -> Caller? {
        if let cached = verifiedJWTs.withLock({ $0[token] }) {
            return cached.expires > now ? cached.caller : nil
        }
        guard token.utf8.count < 8192, let keyID = ServiceAccountAssertion.keyID(of: token),
            let key = directory.activeKey(id: keyID),
            let expires = try? await ServiceAccountAssertion.verify(token, key: key, now: now)
        else { return nil }
        let caller = Caller(projectID: key.projectID, keyID: keyID)
        verifiedJWTs.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[token] = (caller, expires)
        }
        return caller
    }
}
