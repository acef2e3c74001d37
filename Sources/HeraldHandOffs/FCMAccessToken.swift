import AsyncHTTPClient
public import HeraldCore
import NIOCore
import Synchronization
import _CryptoExtras

/// The OAuth2 access token a project's hand-offs to FCM carry (SEMANTICS R2): obtained at
/// the key's `token_uri` with a signed JWT assertion, one request at a time, and reused until
/// `renewBeforeSeconds` before it expires.
final class FCMAccessToken: Sendable {
    /// Why no token was obtained; `isRefusal` when the token service refused the key itself.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        var isRefusal: Bool
    }

    /// How long before its end a token is replaced.
    static let renewBeforeSeconds: Int64 = 300
    /// The scope FCM's send API asks for.
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    let credential: FCMRelayCredential
    private let client: HTTPClient
    private let state = Mutex<(value: String, expiresAt: Timestamp, making: PendingResult<String>?)>(
        ("", Timestamp(milliseconds: 0), nil))

    init(credential: FCMRelayCredential, client: HTTPClient) {
        self.credential = credential
        self.client = client
    }

    /// The token to send at `now`: the current one, or a new one that the first caller to
    /// need it obtains in its own task while every caller meanwhile waits for it.
    func value(now: Timestamp) async throws -> String {
        let turn = state.withLock { state -> Turn in
            if state.making == nil, now.adding(seconds: Self.renewBeforeSeconds) < state.expiresAt {
                return .current(state.value)
            }
            if let making = state.making { return .wait(making) }
            let making = PendingResult<String>()
            state.making = making
            return .make(making)
        }
        switch turn {
        case .current(let value):
            return value
        case .wait(let making):
            return try await making.value
        case .make(let making):
            let result: Result<String, any Error>
            do {
                let (value, lifetime) = try await obtain(now: now)
                state.withLock { $0 = (value, now.adding(seconds: lifetime), nil) }
                result = .success(value)
            } catch {
                // Not obtained: the next caller tries again.
                state.withLock { $0.making = nil }
                result = .failure(error)
            }
            making.resolve(result)
            return try result.get()
        }
    }

    /// What a caller of `value` does: take the current token, wait for the one being
    /// obtained, or obtain it.
    private enum Turn {
        case current(String)
        case wait(PendingResult<String>)
        case make(PendingResult<String>)
    }

    /// Forgets the current token (FCM did not take it), so the next send obtains another.
    func forget(_ value: String) {
        state.withLock { state in
            if state.value == value { state.expiresAt = Timestamp(milliseconds: 0) }
        }
    }

    /// One exchange at `token_uri`: the token and its lifetime in seconds.
    private func obtain(now: Timestamp) async throws -> (String, Int64) {
        let assertion: String
        do {
            assertion = try Self.assertion(credential, now: now)
        } catch {
            throw Failure(description: "the key cannot sign", isRefusal: true)
        }
        var request = HTTPClientRequest(url: credential.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(
            ByteBuffer(
                string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .seconds(20))
            body = try await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw Failure(description: "token_uri unreachable", isRefusal: false)
        }
        let json = try? JSONParser.parse(Array(body.readableBytesView))
        guard response.status.code == 200, let token = json?["access_token"]?.stringValue else {
            // 400 and 401 refuse the grant (a wrong or revoked key); anything else may pass.
            let code = Int(response.status.code)
            throw Failure(
                description: "token_uri answered \(code) \(json?["error"]?.stringValue ?? "")",
                isRefusal: code == 400 || code == 401 || code == 403)
        }
        let lifetime = json?["expires_in"]?.numberValue.map { Int64($0) } ?? 3600
        return (token, max(lifetime, Self.renewBeforeSeconds + 60))
    }

    /// A signed JWT-bearer assertion (RS256) for `credential`, whose audience is its `token_uri`.
    static func assertion(_ credential: FCMRelayCredential, now: Timestamp) throws -> String {
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: credential.privateKeyPEM)
        let header = JSONValue.stringObject([("typ", "JWT"), ("alg", "RS256"), ("kid", credential.privateKeyID)])
        let claims = JSONValue.object([
            (key: "iss", value: .string(credential.clientEmail)), (key: "scope", value: .string(scope)),
            (key: "aud", value: .string(credential.tokenURI)),
            (key: "iat", value: .number(Double(now.seconds))), (key: "exp", value: .number(Double(now.seconds + 3600))),
        ])
        let input = Base64URL.encode(header.renderedBytes) + "." + Base64URL.encode(claims.renderedBytes)
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
