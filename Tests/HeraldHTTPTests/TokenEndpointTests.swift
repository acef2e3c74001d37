import Crypto
import HTTPTypes
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing
import _CryptoExtras

@testable import HeraldHTTP

/// `POST /token`: the JWT-bearer grant as google-auth performs it (SEMANTICS C4).
@Suite struct TokenEndpointTests {
    @Test func C4_aGoodAssertionGetsAnHourLongBearerToken() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let response = try await TestServer.exchange(try server.assertion(), client: client)
            #expect(response.status == .ok)
            let body = try response.json()
            #expect(body["expires_in"] == .number(3599))
            #expect(body["token_type"] == .string("Bearer"))
            #expect(body["access_token"]?.stringValue?.hasPrefix("ya29.") == true)
        }
    }

    @Test func C4_theAudienceIsGooglesTokenURLAsTheSDKsPutItOrHeralds() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            for audience in ["https://oauth2.googleapis.com/token", "https://accounts.google.com/o/oauth2/token"] {
                let response = try await TestServer.exchange(
                    try server.assertion(claims: ["aud": .string(audience)]), client: client)
                #expect(response.status == .ok)
            }
            for audience: JSONValue in [.string("https://elsewhere.example/token"), .string("https://evil/"), .null] {
                try expectOAuthError(
                    try await TestServer.exchange(try server.assertion(claims: ["aud": audience]), client: client),
                    "invalid_grant")
            }
        }
        let own = ["https://push.example:8080"]
        #expect(ServiceAccountAssertion.Audience.tokenEndpoint(origins: own).accepts("https://push.example:8080/token"))
        #expect(!ServiceAccountAssertion.Audience.tokenEndpoint(origins: own).accepts("http://push.example:8080/token"))
        #expect(
            !ServiceAccountAssertion.Audience.tokenEndpoint(origins: own).accepts("https://push.example.evil/token"))
        #expect(ServiceAccountAssertion.Audience.api(origins: []).accepts(nil))
        #expect(ServiceAccountAssertion.Audience.api(origins: ["http://h:1"]).accepts("http://h:1/"))
        #expect(!ServiceAccountAssertion.Audience.api(origins: ["http://h:1"]).accepts("https://evil.example/"))
        #expect(WebOrigin.of("https://push.example:8080/base/") == "https://push.example:8080")
    }

    /// A `Host` header is the caller's to choose: an assertion made for another service's
    /// token URL is refused even when the request names that service as its host.
    @Test func C4_theAudienceIsNeverTakenFromTheHostHeader() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let assertion = try server.assertion(claims: ["aud": .string("https://other.example/token")])
            let response = try await client.execute(
                uri: "/token", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", HTTPField.Name("Host")!: "other.example"],
                body: ByteBuffer(
                    string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
            try expectOAuthError(response, "invalid_grant")
        }
    }

    @Test func C4_theMessagingScopeAloneIsEnough() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let assertion = try server.assertion(claims: [
                "scope": .string("https://www.googleapis.com/auth/firebase.messaging")
            ])
            #expect(try await TestServer.exchange(assertion, client: client).status == .ok)
        }
    }

    @Test func C4_aBadSignatureIsAnInvalidGrant() async throws {
        let server = try await TestServer.make()
        let other = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try await server.test { client in
            let response = try await TestServer.exchange(try server.assertion(signedWith: other), client: client)
            try expectOAuthError(response, "invalid_grant")
        }
    }

    @Test func C4_anExpiredAssertionIsAnInvalidGrant() async throws {
        let server = try await TestServer.make()
        let assertion = try server.assertion()
        server.clock.advance(seconds: 3601)
        try await server.test { client in
            try expectOAuthError(try await TestServer.exchange(assertion, client: client), "invalid_grant")
        }
    }

    @Test func C4_anAssertionFromTheFutureOrLivingOverAnHourIsAnInvalidGrant() async throws {
        let server = try await TestServer.make()
        let now = Double(server.clock.now().seconds)
        try await server.test { client in
            for claims: [String: JSONValue] in [
                ["iat": .number(now + 3600), "exp": .number(now + 7200)],
                ["iat": .number(now), "exp": .number(now + 7200)],
                ["iat": .null],
                ["exp": .number(now - 10), "iat": .number(now - 20)],
            ] {
                try expectOAuthError(
                    try await TestServer.exchange(try server.assertion(claims: claims), client: client), "invalid_grant"
                )
            }
        }
    }

    /// A key file made against another store (`herald project create` with another
    /// --data-dir) is told so, not that its signature is wrong.
    @Test func C4_anUnknownKeyIDIsAnInvalidGrantThatSaysTheServerHasNoSuchKey() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let response = try await TestServer.exchange(try server.assertion(keyID: "0000"), client: client)
            try expectOAuthError(response, "invalid_grant", saying: "this server has no key 0000")
            #expect(try response.json()["error_description"]?.stringValue?.contains("--data-dir") == true)
        }
    }

    @Test func C4_aWrongIssuerIsAnInvalidGrant() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let response = try await TestServer.exchange(
                try server.assertion(claims: ["iss": .string("someone@else.example")]), client: client)
            try expectOAuthError(response, "invalid_grant")
        }
    }

    @Test func C4_aScopeWithoutMessagingIsRefused() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let assertion = try server.assertion(claims: ["scope": .string("https://www.googleapis.com/auth/datastore")]
            )
            try expectOAuthError(try await TestServer.exchange(assertion, client: client), "invalid_scope")
        }
    }

    @Test func C4_anAssertionReplayedAfterItsKeyWasRevokedIsRefused() async throws {
        let server = try await TestServer.make()
        let assertion = try server.assertion()
        try await server.test { client in
            #expect(try await TestServer.exchange(assertion, client: client).status == .ok)
            _ = try await server.store.revokeServiceAccountKey(id: server.key.id, at: server.clock.now())
            // Refused at once, before the credential cache reloads.
            try expectOAuthError(
                try await TestServer.exchange(assertion, client: client), "invalid_grant",
                saying: "the key \(server.key.id) was revoked")
        }
    }

    @Test func malformedGrantsAreOAuthErrors() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let cases: [(String, String)] = [
                ("grant_type=password&assertion=x", "unsupported_grant_type"),
                ("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", "invalid_request"),
                ("grant_type=%zz", "invalid_request"),
                (
                    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=not.a.jwt",
                    "invalid_grant"
                ),
            ]
            for (form, code) in cases {
                let response = try await client.execute(
                    uri: "/token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: form))
                try expectOAuthError(response, code)
            }
        }
    }

    private func expectOAuthError(
        _ response: TestResponse, _ code: String, saying words: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == .badRequest, sourceLocation: sourceLocation)
        let body = try response.json()
        #expect(body["error"] == .string(code), sourceLocation: sourceLocation)
        let description = body["error_description"]?.stringValue ?? ""
        #expect(
            !description.isEmpty && (words.isEmpty || description.contains(words)), "\(description)",
            sourceLocation: sourceLocation)
    }
}

/// Access and installation tokens: only the server that signed one, unchanged, within its
/// lifetime and for its purpose, accepts it (SEMANTICS C4).
@Suite struct AccessTokenTests {
    let tokens = AccessTokens(secret: Array(repeating: 7, count: 32))
    let caller = Caller(projectID: "alpha-project", keyID: "k1")
    let now = Timestamp(seconds: 1_000_000)

    @Test func C4_aTokenIsAcceptedUnchangedUntilItExpires() {
        let token = tokens.issue(for: caller, now: now)
        #expect(tokens.verify(token, now: now) == caller)
        #expect(tokens.verify(token, now: now.adding(milliseconds: 3_599_000)) == caller)
        #expect(tokens.verify(token, now: now.adding(milliseconds: 3_600_000)) == nil)
        #expect(AccessTokens(secret: Array(repeating: 8, count: 32)).verify(token, now: now) == nil)
        #expect(tokens.verifyInstallationToken(token, now: now) == nil)
        let installation = tokens.issueInstallationToken(projectID: "alpha-project", fid: "fid-1", now: now)
        #expect(tokens.verifyInstallationToken(installation, now: now)?.fid == "fid-1")
        #expect(tokens.verify(installation, now: now) == nil)
    }

    @Test func C4_everyChangedCharacterIsRefused() {
        let token = Array(tokens.issue(for: caller, now: now).utf8)
        for position in token.indices {
            var changed = token
            changed[position] = changed[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(tokens.verify(String(decoding: changed, as: UTF8.self), now: now) == nil)
        }
        #expect(tokens.verify(String(decoding: token.dropLast(), as: UTF8.self), now: now) == nil)
    }

    /// A token signed with `secret` the way Herald signs, with any lifetime.
    static func forged(secret: [UInt8], issued: Int64, expires: Int64) -> String {
        let payload = Base64URL.encode(Array("alpha-project|k1|\(issued)|\(expires)".utf8))
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array(("ya29.h1." + payload).utf8), using: SymmetricKey(data: secret))
        return "ya29.h1." + payload + "." + Base64URL.encode(Array(mac))
    }

    @Test func C4_aCorrectlySignedTokenThatLivesLongerThanAnHourIsRefused() {
        let secret = Array(repeating: UInt8(7), count: 32)
        let tenYears = Self.forged(secret: secret, issued: now.seconds, expires: now.seconds + 10 * 365 * 86400)
        #expect(tokens.verify(tenYears, now: now) == nil)
        let anHour = Self.forged(secret: secret, issued: now.seconds, expires: now.seconds + 3600)
        #expect(tokens.verify(anHour, now: now) == caller)
        let fromTheFuture = Self.forged(secret: secret, issued: now.seconds + 3000, expires: now.seconds + 3600)
        #expect(tokens.verify(fromTheFuture, now: now) == nil)
    }

    @Test func C4_afterARotationTheOldSecretsTokensWorkForAtMostAnHour() {
        let old = Array(repeating: UInt8(7), count: 32)
        let rotated = AccessTokens(secret: old)
        let before = rotated.issue(for: caller, now: now)
        rotated.use(
            SecretRotation(
                current: Array(repeating: 9, count: 32),
                previous: (old, now.adding(seconds: SecretRotation.overlapSeconds))))
        let after = rotated.issue(for: caller, now: now)
        #expect(after != before)
        #expect(rotated.verify(before, now: now.adding(seconds: 1800)) == caller)
        #expect(rotated.verify(after, now: now.adding(seconds: 1800)) == caller)
        // A token minted with the old secret after the rotation dies with the overlap too.
        let late = Self.forged(secret: old, issued: now.seconds + 3000, expires: now.seconds + 6600)
        #expect(rotated.verify(late, now: now.adding(seconds: 3100)) == caller)
        #expect(rotated.verify(late, now: now.adding(seconds: 3600)) == nil)
    }
}
