public import HeraldCore
import JWTKit
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// Herald's connection to APNs for one project's credential in one environment: one
/// HTTP/2 connection over TLS (ALPN `h2`), opened when first needed and again after it
/// closes, on which each batch of requests is written as frames with one flush (streams
/// past APNs' SETTINGS limit wait in the HTTP/2 handler's buffer); a client certificate,
/// or a provider token on every request, made again on `ProviderTokenSchedule`'s terms.
final class APNsConnection: Sendable {
    let credential: APNsCredential
    let baseURL: String
    private let host: String
    private let port: Int
    private let tls: NIOSSLContext
    private let signer: JWTKeyCollection?
    private let channel: Mutex<(any Channel)?> = Mutex(nil)
    private let token: Mutex<(schedule: ProviderTokenSchedule, value: String, making: Task<String, any Error>?)> =
        Mutex((ProviderTokenSchedule(), "", nil))

    /// How long a batch's answers may take before its unanswered requests are retried.
    static let requestTimeout: TimeAmount = .seconds(20)

    /// Why a request got no answer.
    struct NoAnswer: Error {}

    init(credential: APNsCredential, baseURL: String, trustRoots: [String]) async throws {
        self.credential = credential
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        let authority = self.baseURL.dropFirst("https://".count).split(separator: "/").first.map(String.init) ?? ""
        if let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) {
            (host, self.port) = (String(authority[..<colon]), port)
        } else {
            (host, port) = (authority, 443)
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["h2"]
        if !trustRoots.isEmpty { configuration.additionalTrustRoots = trustRoots.map { .file($0) } }
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
        tls = try NIOSSLContext(configuration: configuration)
    }

    /// Sends a batch of requests; answers APNs' status and reason for each, nil for one
    /// that got no answer.
    func send(_ requests: [APNsRequest], now: Timestamp) async -> [(status: Int, reason: String?)?] {
        guard !requests.isEmpty else { return [] }
        let channel: any Channel
        do {
            channel = try await openChannel()
        } catch {
            return Array(repeating: nil, count: requests.count)
        }
        var authorization: String?
        if signer != nil {
            guard let token = try? await providerToken(now) else { return Array(repeating: nil, count: requests.count) }
            authorization = "bearer " + token
        }
        let loop = channel.eventLoop
        var batch = APNsFrameHandler.Batch(requests: [])
        var futures: [EventLoopFuture<(Int, [UInt8])>] = []
        for request in requests {
            var headers = HPACKHeaders([(":method", "POST"), (":scheme", "https")])
            // A value each request has its own of is not kept in the connection's header
            // table, where it would only push out the ones every request repeats.
            headers.add(name: ":path", value: request.path, indexing: .nonIndexable)
            headers.add(name: ":authority", value: host)
            if let authorization { headers.add(name: "authorization", value: authorization) }
            for (name, value) in request.headers {
                headers.add(name: name, value: value, indexing: name == "apns-id" ? .nonIndexable : .indexable)
            }
            let promise = loop.makePromise(of: (Int, [UInt8]).self)
            futures.append(promise.futureResult)
            batch.requests.append((headers, ByteBuffer(bytes: request.payload), promise))
        }
        let deadline = loop.scheduleTask(in: Self.requestTimeout) {
            for request in batch.requests { request.promise.fail(NoAnswer()) }
        }
        channel.writeAndFlush(batch).whenFailure { _ in
            for request in batch.requests { request.promise.fail(NoAnswer()) }
        }
        // One wait for the whole batch.
        let results = (try? await EventLoopFuture.whenAllComplete(futures, on: loop).get()) ?? []
        deadline.cancel()
        return results.map { result in
            guard case .success(let (status, body)) = result else { return nil }
            return (status, status == 200 ? nil : (try? JSONParser.parse(body))?["reason"]?.stringValue)
        }
    }

    /// The open connection, or a new one.
    private func openChannel() async throws -> any Channel {
        if let open = channel.withLock({ $0 }), open.isActive { return open }
        let serverHostname = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
        let tls = tls
        let made = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                    // Herald builds every header block itself: checking each again costs a
                    // tenth of a hand-off.
                    try sync.addHandler(
                        NIOHTTP2Handler(
                            mode: .client, headerBlockValidation: .disabled, contentLengthValidation: .disabled))
                    try sync.addHandler(APNsFrameHandler())
                }
            }
            .connect(host: host, port: port).get()
        let replaced = channel.withLock { current in
            defer { current = made }
            return current
        }
        replaced?.close(promise: nil)
        return made
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
        try? await channel.withLock({ $0 })?.close()
    }

    /// A provider token's claims: the team id and when it was made.
    struct ProviderClaims: JWTPayload {
        var iss: String
        var iat: Int64

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
