public import HeraldCore
import JWTKit
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// Herald's connection to APNs for one project's credential in one environment: an
/// `HTTP2Connection` with a client certificate, or with a provider token on every request,
/// made again on `ProviderTokenSchedule`'s terms.
final class APNsConnection: Sendable {
    let credential: APNsCredential
    private let connection: HTTP2Connection
    private let signer: JWTKeyCollection?
    private let token: Mutex<(schedule: ProviderTokenSchedule, value: String, making: Task<String, any Error>?)> =
        Mutex((ProviderTokenSchedule(), "", nil))

    init(credential: APNsCredential, baseURL: String, trustRoots: [String]) async throws {
        self.credential = credential
        var configuration = HTTP2Connection.clientTLS(trustRoots: trustRoots)
        switch credential.secret {
        case .signingKey(let keyID, _, let pem):
            signer = await JWTKeyCollection().add(
                ecdsa: try ES256PrivateKey(pem: pem), kid: JWKIdentifier(string: keyID))
        case .certificate(let bytes, let password):
            signer = nil
            if let password {
                let bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: Array(password.utf8))
                configuration.certificateChain = bundle.certificateChain.map { .certificate($0) }
                configuration.privateKey = .privateKey(bundle.privateKey)
            } else {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMBytes(bytes).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: bytes, format: .pem))
            }
        }
        connection = try HTTP2Connection(baseURL: baseURL, tls: configuration)
    }

    /// Sends a batch of requests; answers APNs' status and reason for each, nil for one
    /// that got no answer.
    func send(_ requests: [APNsRequest], now: Timestamp) async -> [(status: Int, reason: String?)?] {
        guard !requests.isEmpty else { return [] }
        var authorization: [(String, String)] = []
        if signer != nil {
            guard let token = try? await providerToken(now) else { return Array(repeating: nil, count: requests.count) }
            authorization = [("authorization", "bearer " + token)]
        }
        let answers = await connection.send(
            requests.map { request in
                HTTP2Connection.Request(
                    path: request.path, ownHeaders: request.headers.filter { $0.0 == "apns-id" },
                    headers: authorization + request.headers.filter { $0.0 != "apns-id" }, body: request.payload)
            })
        return answers.map { answer in
            answer.map {
                ($0.status, $0.status == 200 ? nil : (try? JSONParser.parse($0.body))?["reason"]?.stringValue)
            }
        }
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
        await connection.shutdown()
    }

    /// A provider token's claims: the team id and when it was made.
    struct ProviderClaims: JWTPayload {
        var iss: String
        var iat: Int64

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
