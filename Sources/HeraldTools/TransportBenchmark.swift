public import AsyncHTTPClient
public import HeraldCore
import NIOCore
import NIOHTTP1
public import NIOSSL

/// `herald bench transports`: validated v1 sends over plain HTTP/1.1, HTTP/1.1 with TLS and
/// HTTP/2 with TLS (drop-in mode's listener), through one HTTP client so that only the
/// transport differs: sends a second and the server's CPU time a send, in alternating
/// rounds, with the median of each.
public struct TransportBenchmark: Sendable {
    public enum Transport: String, Sendable, CaseIterable {
        case plaintext = "http/1.1"
        case tls = "http/1.1+tls"
        case http2 = "h2+tls"
    }

    public struct Options: Sendable {
        /// `http://HOST:PORT` and `https://HOST:PORT` of the same server.
        public var plaintextURL: String
        public var tlsURL: String
        /// The CA the TLS listener's certificate chains to (its host name is not checked: the
        /// benchmark reaches it by address).
        public var caPath: String
        public var projectID: String
        public var accessToken: String
        /// Requests in flight at once: HTTP/1.1 connections, or streams on one HTTP/2 connection.
        public var concurrency: Int
        public var seconds: Double
        public var rounds: Int
        public var serverPID: Int32?

        public init(
            plaintextURL: String, tlsURL: String, caPath: String, projectID: String, accessToken: String,
            concurrency: Int, seconds: Double, rounds: Int, serverPID: Int32?
        ) {
            self.plaintextURL = plaintextURL
            self.tlsURL = tlsURL
            self.caPath = caPath
            self.projectID = projectID
            self.accessToken = accessToken
            self.concurrency = concurrency
            self.seconds = seconds
            self.rounds = rounds
            self.serverPID = serverPID
        }
    }

    /// One transport's medians over the rounds.
    public struct Result: Sendable {
        public var transport: Transport
        public var perSecond: Double
        public var cpuMicrosecondsPerSend: Double?
        public var failures: Int
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws -> [Result] {
        var rates: [Transport: [Double]] = [:]
        var cpu: [Transport: [Double]] = [:]
        var failures: [Transport: Int] = [:]
        for round in 0..<options.rounds {
            // Alternating order, so that no transport always runs on a warmer server.
            let order = round % 2 == 0 ? Transport.allCases : Transport.allCases.reversed()
            for transport in order {
                try await ProcessCPU.waitUntilIdle(pid: options.serverPID)
                let meter = CPUMeter(pid: options.serverPID)
                let (sent, failed, seconds) = try await load(transport)
                let used = meter.used()
                rates[transport, default: []].append(Double(sent) / seconds)
                if let used, sent > 0 {
                    cpu[transport, default: []].append(used * 1e6 / Double(sent))
                }
                failures[transport, default: 0] += failed
                progress("round \(round + 1) \(transport.rawValue): \(Int(Double(sent) / seconds)) sends/s")
            }
        }
        return Transport.allCases.map { transport in
            Result(
                transport: transport, perSecond: Self.median(rates[transport] ?? []),
                cpuMicrosecondsPerSend: cpu[transport].map(Self.median), failures: failures[transport] ?? 0)
        }
    }

    /// Sends for `seconds` over one transport; answers the sends accepted, those refused,
    /// and the time taken.
    private func load(_ transport: Transport) async throws -> (Int, Int, Double) {
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(options.caPath)
        tls.certificateVerification = .noHostnameVerification
        configuration.tlsConfiguration = tls
        configuration.httpVersion = transport == .http2 ? .automatic : .http1Only
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = options.concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let base = transport == .plaintext ? options.plaintextURL : options.tlsURL
        var request = HTTPClientRequest(url: base + "/v1/projects/\(options.projectID)/messages:send")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(options.accessToken)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(
            ByteBuffer(
                string:
                    #"{"message":{"topic":"bench","data":{"kind":"bench"}},"validate_only":true}"#))
        let prepared = request
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(Int64(options.seconds * 1000))
        let counts = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<options.concurrency {
                group.addTask {
                    var sent = 0
                    var failed = 0
                    while ContinuousClock.now < deadline {
                        let response = try await client.execute(prepared, timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 16)
                        if response.status == .ok { sent += 1 } else { failed += 1 }
                    }
                    return (sent, failed)
                }
            }
            return try await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
        let elapsed = ContinuousClock.now - started
        try await client.shutdown()
        return (
            counts.0, counts.1,
            Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        )
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
