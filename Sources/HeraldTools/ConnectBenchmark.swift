public import HeraldClient
public import HeraldCore
import HeraldProtocol
import NIOCore
import NIOPosix
public import NIOSSL

/// `herald bench connect`: check in N devices, open N device connections from several
/// loopback source addresses, hold them, and report the connect rate, the server's
/// resident memory per connection and the CPU it spends on them while they are idle.
public struct ConnectBenchmark: Sendable {
    public struct Options: Sendable {
        public var server: HTTPURL
        public var gatewayHost: String
        public var gatewayPort: Int
        public var tls: NIOSSLContext?
        public var connections: Int
        public var sources: [String]
        public var serverPID: Int32?
        public var concurrency: Int = 256
        public var holdSeconds: Double = 3
        /// How long the server's CPU is watched once every connection is idle.
        public var idleSeconds: Double = 5
        /// Connect as Firefox does, over Mozilla's push protocol on the HTTP port (WIRE.md
        /// §8b), each device saying `hello` with its `uaid`, rather than over MCS.
        public var mozillaPush = false

        public init(
            server: HTTPURL, gatewayHost: String, gatewayPort: Int, tls: NIOSSLContext?, connections: Int,
            sources: [String], serverPID: Int32?
        ) {
            self.server = server
            self.gatewayHost = gatewayHost
            self.gatewayPort = gatewayPort
            self.tls = tls
            self.connections = connections
            self.sources = sources
            self.serverPID = serverPID
        }
    }

    public struct Report: Sendable {
        public var connections: Int
        public var failures: Int
        public var connectSeconds: Double
        public var serverRSSBeforeKB: Int?
        public var serverRSSAfterKB: Int?
        /// Server CPU seconds over `idleSeconds` with every connection open and idle.
        public var serverIdleCPUSeconds: Double?
        public var idleSeconds: Double

        public var connectsPerSecond: Double { Double(connections) / connectSeconds }

        /// Resident memory the server added per held connection, in kB.
        public var kilobytesPerConnection: Double? {
            guard let before = serverRSSBeforeKB, let after = serverRSSAfterKB, connections > 0 else { return nil }
            return Double(after - before) / Double(connections)
        }

        /// Server CPU per idle connection per second, in µs: what holding a connection
        /// costs without traffic (the gateway's once-a-second clock tick, heartbeats).
        public var idleMicrosecondsPerConnectionSecond: Double? {
            guard let cpu = serverIdleCPUSeconds, connections > 0, idleSeconds > 0 else { return nil }
            return cpu * 1e6 / Double(connections) / idleSeconds
        }

        public var json: JSONValue {
            .object([
                (key: "connections", value: .number(Double(connections))),
                (key: "failures", value: .number(Double(failures))),
                (key: "connect_seconds", value: .number(connectSeconds)),
                (key: "connects_per_second", value: .number(connectsPerSecond.rounded())),
                (key: "server_rss_before_kb", value: serverRSSBeforeKB.map { .number(Double($0)) } ?? .null),
                (key: "server_rss_after_kb", value: serverRSSAfterKB.map { .number(Double($0)) } ?? .null),
                (
                    key: "kb_per_connection",
                    value: kilobytesPerConnection.map { .number(($0 * 100).rounded() / 100) } ?? .null
                ),
                (
                    key: "idle_cpu_us_per_connection_second",
                    value: idleMicrosecondsPerConnectionSecond.map { .number(($0 * 1000).rounded() / 1000) } ?? .null
                ),
            ])
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws -> Report {
        let registrar = try DeviceRegistrar(server: options.server.text)
        progress("checking in \(options.connections) devices")
        let identities = try await withThrowingTaskGroup(of: [(UInt64, UInt64)].self) { group in
            let workers = 8
            for worker in 0..<workers {
                let count = options.connections / workers + (worker < options.connections % workers ? 1 : 0)
                group.addTask {
                    var made: [(UInt64, UInt64)] = []
                    for _ in 0..<count { made.append(try await registrar.checkin(existing: nil)) }
                    return made
                }
            }
            var all: [(UInt64, UInt64)] = []
            for try await made in group { all += made }
            return all
        }
        let rssBefore = options.serverPID.flatMap(ProcessMemory.residentKilobytes)
        progress("connecting")
        let started = ContinuousClock.now
        var channels: [any Channel] = []
        var failures = 0
        try await withThrowingTaskGroup(of: (any Channel)?.self) { group in
            var next = 0
            func addNext() {
                let (androidID, securityToken) = identities[next]
                let source = options.sources.isEmpty ? nil : options.sources[next % options.sources.count]
                let options = options
                group.addTask {
                    guard !options.mozillaPush else {
                        return try? await MozillaPushBenchClient.connect(
                            host: options.server.host, port: options.server.port,
                            uaid: MozillaPushUAID.make(androidID: androidID, securityToken: securityToken)
                        ).channel
                    }
                    return try? await BenchDevice.connect(
                        host: options.gatewayHost, port: options.gatewayPort, localAddress: source, tls: options.tls,
                        androidID: androidID, securityToken: securityToken)
                }
                next += 1
            }
            while next < min(options.concurrency, identities.count) { addNext() }
            while let result = try await group.next() {
                if let channel = result { channels.append(channel) } else { failures += 1 }
                if (channels.count + failures) % 5000 == 0 { progress("  \(channels.count) connected") }
                if next < identities.count { addNext() }
            }
        }
        let elapsed = ContinuousClock.now - started
        try await Task.sleep(for: .milliseconds(Int(options.holdSeconds * 1000)))
        let rssAfter = options.serverPID.flatMap(ProcessMemory.residentKilobytes)
        try await ProcessCPU.waitUntilIdle(pid: options.serverPID)
        let cpu = CPUMeter(pid: options.serverPID)
        try await Task.sleep(for: .milliseconds(Int(options.idleSeconds * 1000)))
        let idleCPU = cpu.used()
        for channel in channels { channel.close(promise: nil) }
        return Report(
            connections: channels.count, failures: failures, connectSeconds: elapsed.seconds,
            serverRSSBeforeKB: rssBefore, serverRSSAfterKB: rssAfter,
            serverIdleCPUSeconds: idleCPU,
            idleSeconds: options.idleSeconds)
    }
}

extension Duration {
    /// The duration in seconds.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in nanoseconds.
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
