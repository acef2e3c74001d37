import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/2 connection over TLS (ALPN `h2`) to another push service (APNs, FCM), opened
/// when first needed and again after it closes, on which each batch of requests is written
/// as frames with one flush; streams past the peer's SETTINGS limit wait in the HTTP/2
/// handler's buffer.
final class HTTP2Connection: Sendable {
    /// A request: its headers past the pseudo-headers this connection adds, and its body.
    struct Request {
        var method = "POST"
        var path: String
        /// Headers each request has its own value of, which are not kept in the connection's
        /// header table, where they would only push out the ones every request repeats.
        var ownHeaders: [(String, String)] = []
        var headers: [(String, String)]
        var body: [UInt8]
    }

    let host: String
    let port: Int
    private let tls: NIOSSLContext
    /// The address each new connection goes to, checked then; nil connects to `host` as
    /// resolved by the system.
    private let address: (@Sendable () throws -> String)?
    private let channel: Mutex<(any Channel)?> = Mutex(nil)

    /// How long a batch's answers may take before its unanswered requests are retried.
    static let requestTimeout: TimeAmount = .seconds(20)

    /// Why a request got no answer.
    struct NoAnswer: Error {}

    /// A connection to `baseURL`'s host and port (443 unless the URL names one) with `tls`,
    /// whose application protocols this sets to `h2`; `address`, when given, answers the
    /// address to connect to each time a connection is made (the host still names the TLS
    /// server and the requests' authority), or throws to refuse it.
    init(
        baseURL: String, tls configuration: TLSConfiguration, address: (@Sendable () throws -> String)? = nil
    ) throws {
        self.address = address
        let authority = baseURL.dropFirst("https://".count).split(separator: "/").first.map(String.init) ?? ""
        if let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) {
            (host, self.port) = (String(authority[..<colon]), port)
        } else {
            (host, port) = (authority, 443)
        }
        var configuration = configuration
        configuration.applicationProtocols = ["h2"]
        tls = try NIOSSLContext(configuration: configuration)
    }

    /// A client TLS configuration that also trusts the CA certificates in `trustRoots`' files.
    static func clientTLS(trustRoots: [String]) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if !trustRoots.isEmpty { configuration.additionalTrustRoots = trustRoots.map { .file($0) } }
        return configuration
    }

    /// Sends a batch of requests; answers each one's answer, nil for one that got none.
    func send(_ requests: [Request]) async -> [HTTP2Answer?] {
        guard !requests.isEmpty else { return [] }
        let channel: any Channel
        do {
            channel = try await openChannel()
        } catch {
            return Array(repeating: nil, count: requests.count)
        }
        let loop = channel.eventLoop
        var batch = HTTP2FrameHandler.Batch(requests: [])
        var futures: [EventLoopFuture<HTTP2Answer>] = []
        for request in requests {
            var headers = HPACKHeaders([(":method", request.method), (":scheme", "https")])
            headers.add(name: ":path", value: request.path, indexing: .nonIndexable)
            headers.add(name: ":authority", value: host)
            for (name, value) in request.headers { headers.add(name: name, value: value) }
            for (name, value) in request.ownHeaders { headers.add(name: name, value: value, indexing: .nonIndexable) }
            let promise = loop.makePromise(of: HTTP2Answer.self)
            futures.append(promise.futureResult)
            batch.requests.append((headers, ByteBuffer(bytes: request.body), promise))
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
        return results.map { try? $0.get() }
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
                    try sync.addHandler(HTTP2FrameHandler())
                }
            }
            .connect(host: try address?() ?? host, port: port).get()
        let replaced = channel.withLock { current in
            defer { current = made }
            return current
        }
        replaced?.close(promise: nil)
        return made
    }

    func shutdown() async {
        try? await channel.withLock({ $0 })?.close()
    }
}
