import Crypto
public import HeraldCore
import HeraldProtocol
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
    private let signer: P256.Signing.PrivateKey?
    private let token = Mutex<(schedule: ProviderTokenSchedule, value: String)>((ProviderTokenSchedule(), ""))

    init(credential: APNsCredential, baseURL: String, trustRoots: [String]) async throws {
        self.credential = credential
        var configuration = HTTP2Connection.clientTLS(trustRoots: trustRoots)
        switch credential.secret {
        case .signingKey(_, _, let pem):
            signer = try P256.Signing.PrivateKey(pemRepresentation: pem)
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
            guard let token = try? providerToken(now) else { return Array(repeating: nil, count: requests.count) }
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

    /// The provider token to send at `now`, made again when it is due. It is made under the
    /// lock, so that requests that find it due together get one new token: APNs takes a
    /// connection changing its token twice within 20 minutes as abuse.
    private func providerToken(_ now: Timestamp) throws -> String {
        try token.withLock { state in
            if !state.schedule.needsToken(at: now) { return state.value }
            return try made(&state, now)
        }
    }

    /// Makes a new provider token now if APNs' `ExpiredProviderToken` allows one; false when
    /// the current one is too young to replace.
    func renewToken(_ now: Timestamp) throws -> Bool {
        guard signer != nil else { return false }
        return try token.withLock { state in
            guard state.schedule.mayRenewEarly(at: now) else { return false }
            _ = try made(&state, now)
            return true
        }
    }

    /// A new token, made at `now`; one that cannot be made leaves the schedule to try again.
    private func made(_ state: inout (schedule: ProviderTokenSchedule, value: String), _ now: Timestamp) throws
        -> String
    {
        guard let signer, case .signingKey(let keyID, let teamID, _) = credential.secret else { return "" }
        do {
            state.value = try ES256JWT.sign(
                header: [(key: "kid", value: .string(keyID))],
                claims: [(key: "iss", value: .string(teamID)), (key: "iat", value: .number(Double(now.seconds)))],
                with: signer)
        } catch {
            state.schedule = ProviderTokenSchedule()
            throw error
        }
        state.schedule.issued(at: now)
        return state.value
    }

    func shutdown() async {
        await connection.shutdown()
    }
}
