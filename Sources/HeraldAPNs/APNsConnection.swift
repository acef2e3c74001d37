import AsyncHTTPClient
public import HeraldCore
import JWTKit
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// Herald's connection to APNs for one project's credential in one environment: HTTP/2
/// over TLS (streams up to what APNs' SETTINGS allow, on as few connections as that
/// needs), a client certificate or a provider token on every request, the token made
/// again on `ProviderTokenSchedule`'s terms.
final class APNsConnection: Sendable {
    let credential: APNsCredential
    let baseURL: String
    private let client: HTTPClient
    private let signer: JWTKeyCollection?
    private let token: Mutex<(schedule: ProviderTokenSchedule, value: String, making: Task<String, any Error>?)> =
        Mutex((ProviderTokenSchedule(), "", nil))

    /// How long one request may take before it is retried.
    static let requestTimeout: TimeAmount = .seconds(20)

    init(credential: APNsCredential, baseURL: String, trustRoots: [String]) async throws {
        self.credential = credential
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        var tls = TLSConfiguration.makeClientConfiguration()
        if !trustRoots.isEmpty {
            tls.additionalTrustRoots = trustRoots.map { .file($0) }
        }
        switch credential.secret {
        case .signingKey(let keyID, _, let pem):
            signer = await JWTKeyCollection().add(
                ecdsa: try ES256PrivateKey(pem: pem), kid: JWKIdentifier(string: keyID))
        case .certificate(let bytes, let password):
            signer = nil
            if let password {
                let bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: Array(password.utf8))
                tls.certificateChain = bundle.certificateChain.map { .certificate($0) }
                tls.privateKey = .privateKey(bundle.privateKey)
            } else {
                tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(bytes).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: bytes, format: .pem))
            }
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(10), read: Self.requestTimeout)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Sends one request; answers APNs' status and reason. Throws when no answer came.
    func send(_ request: APNsRequest, now: Timestamp) async throws -> (status: Int, reason: String?) {
        var outgoing = HTTPClientRequest(url: baseURL + request.path)
        outgoing.method = .POST
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if signer != nil {
            outgoing.headers.add(name: "authorization", value: "bearer " + (try await providerToken(now)))
        }
        outgoing.body = .bytes(ByteBuffer(bytes: request.payload))
        let response = try await client.execute(outgoing, timeout: Self.requestTimeout)
        let status = Int(response.status.code)
        if status == 200 { return (status, nil) }
        let body = try await response.body.collect(upTo: 65_536)
        let reason = (try? JSONParser.parse(body.readableBytesView))?["reason"]?.stringValue
        return (status, reason)
    }

    /// The provider token to send at `now`, made again when it is due. Requests that find
    /// it due together wait for one new token: APNs takes a connection changing its token
    /// twice within 20 minutes as abuse.
    private func providerToken(_ now: Timestamp) async throws -> String {
        let (current, making) = token.withLock { state -> (String?, Task<String, any Error>?) in
            if !state.schedule.needsToken(at: now) { return (state.value, nil) }
            return (nil, tokenTask(&state, now))
        }
        if let current { return current }
        return try await making!.value
    }

    /// Makes a new provider token now if APNs' `ExpiredProviderToken` allows one; false when
    /// the current one is too young to replace.
    func renewToken(_ now: Timestamp) async throws -> Bool {
        guard signer != nil else { return false }
        let making = token.withLock { state in
            state.schedule.mayRenewEarly(at: now) ? tokenTask(&state, now) : nil
        }
        guard let making else { return false }
        _ = try await making.value
        return true
    }

    /// The task making the next token: the one under way, or a new one that counts as made
    /// at `now` (so that requests meanwhile wait for it rather than start another).
    private func tokenTask(
        _ state: inout (schedule: ProviderTokenSchedule, value: String, making: Task<String, any Error>?),
        _ now: Timestamp
    ) -> Task<String, any Error> {
        if let making = state.making { return making }
        state.schedule.issued(at: now)
        let making = Task { [self] in
            do {
                let value = try await makeToken(now)
                token.withLock {
                    $0.value = value
                    $0.making = nil
                }
                return value
            } catch {
                // Not made: the next request tries again.
                token.withLock {
                    $0.schedule = ProviderTokenSchedule()
                    $0.making = nil
                }
                throw error
            }
        }
        state.making = making
        return making
    }

    private func makeToken(_ now: Timestamp) async throws -> String {
        guard let signer, case .signingKey(let keyID, let teamID, _) = credential.secret else { return "" }
        return try await signer.sign(ProviderClaims(iss: teamID, iat: now.seconds), kid: JWKIdentifier(string: keyID))
    }

    func shutdown() async {
        try? await client.shutdown()
    }

    /// A provider token's claims: the team id and when it was made.
    struct ProviderClaims: JWTPayload {
        var iss: String
        var iat: Int64

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
