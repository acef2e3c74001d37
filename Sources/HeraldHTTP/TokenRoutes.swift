import HeraldCore
import HeraldStorage
import HeraldTelemetry
import Hummingbird

/// `POST /token`: the OAuth 2.0 JWT-bearer grant (RFC 7523) as google-auth performs it.
struct TokenRoutes {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    let store: any CredentialStore
    let authenticator: Authenticator
    let tokens: AccessTokens
    let clock: any HeraldClock
    let metrics: HeraldMetrics

    func register(on router: Router<HeraldRequestContext>) {
        router.post("/token") { request, _ in
            try await exchange(try await request.collectBody())
        }
    }

    /// Exchanges a signed assertion for an access token, or answers an OAuth error.
    func exchange(_ body: ByteBuffer) async throws -> Response {
        guard let form = FormBody.parse(body.readableBytesView) else {
            return oauthError("invalid_request", "The request body is not a valid form.")
        }
        guard form["grant_type"] == Self.grantType else {
            return oauthError("unsupported_grant_type", "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            return oauthError("invalid_request", "Missing required parameter: assertion")
        }
        guard let keyID = ServiceAccountAssertion.keyID(of: assertion) else {
            return oauthError("invalid_grant", "Invalid JWT: its header names no key (kid).")
        }
        // The key is read from the store, not the cache, so a revocation counts at once. Each
        // refusal says which it is: a key file made against another store (a `herald project
        // create` run with another --data-dir) is the commonest, and no signature is wrong.
        guard let key = try await store.serviceAccountKey(id: keyID) else {
            return oauthError(
                "invalid_grant",
                "Invalid JWT: this server has no key \(keyID). Was its key file made with another --data-dir or"
                    + " --store than the server's? `herald project create` and `herald serve` must share one.")
        }
        guard key.isActive else {
            return oauthError("invalid_grant", "Invalid JWT: the key \(keyID) was revoked.")
        }
        guard try await store.project(id: key.projectID) != nil else {
            return oauthError("invalid_grant", "Invalid JWT: the project \(key.projectID) of key \(keyID) was deleted.")
        }
        let now = clock.now()
        do {
            _ = try await ServiceAccountAssertion.verify(
                assertion, key: key, now: now, audience: .tokenEndpoint(origins: authenticator.ownOrigins))
        } catch {
            return oauthError(error.code, error.description)
        }
        let token = tokens.issue(for: Caller(projectID: key.projectID, keyID: key.id), now: now)
        metrics.increment("herald_access_tokens_issued_total", [("project", key.projectID)])
        return Response.json(
            .object([
                (key: "access_token", value: .string(token)),
                (key: "expires_in", value: .number(Double(AccessTokens.lifetimeSeconds - 1))),
                (key: "token_type", value: .string("Bearer")),
            ]),
            headers: [.cacheControl: "no-store"])
    }

    private func oauthError(_ code: String, _ description: String) -> Response {
        Response.json(
            .stringObject([("error", code), ("error_description", description)]),
            status: code == "invalid_client" ? .unauthorized : .badRequest)
    }
}
