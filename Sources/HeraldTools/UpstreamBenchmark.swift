public import HeraldCore
import HeraldProtocol
import NIOCore
import Synchronization

/// `herald bench upstream`: N connected devices each send M upstream messages at once; app
/// servers on XMPP connections acknowledge each as it comes. Reports messages a second from
/// the first send to the last arrival and the server's CPU per message.
public struct UpstreamBenchmark: Sendable {
    public struct Options: Sendable {
        public var target: BenchTarget
        public var xmppHost: String
        public var xmppPort: Int
        public var senderID: Int64
        public var serverKey: String
        public var devices: Int
        public var messagesPerDevice: Int
        public var appServers: Int
        public var serverPID: Int32?

        public init(
            target: BenchTarget, xmppHost: String, xmppPort: Int, senderID: Int64, serverKey: String, devices: Int,
            messagesPerDevice: Int, appServers: Int, serverPID: Int32?
        ) {
            self.target = target
            self.xmppHost = xmppHost
            self.xmppPort = xmppPort
            self.senderID = senderID
            self.serverKey = serverKey
            self.devices = devices
            self.messagesPerDevice = messagesPerDevice
            self.appServers = appServers
            self.serverPID = serverPID
        }
    }

    public struct Report: Sendable {
        public var devices: Int
        public var sent: Int
        public var received: Int
        /// Messages an app server was sent more than once (a lease ran out before its ack).
        public var repeated: Int
        public var seconds: Double
        public var serverCPUSeconds: Double?

        public var perSecond: Double { Double(received) / seconds }
        public var cpuMicrosecondsPerMessage: Double? {
            serverCPUSeconds.map { $0 * 1e6 / Double(max(received, 1)) }
        }

        public var json: JSONValue {
            .object([
                (key: "devices", value: .number(Double(devices))), (key: "sent", value: .number(Double(sent))),
                (key: "received", value: .number(Double(received))),
                (key: "repeated", value: .number(Double(repeated))),
                (key: "seconds", value: .number((seconds * 1000).rounded() / 1000)),
                (key: "per_second", value: .number(perSecond.rounded())),
                (
                    key: "server_cpu_us_per_message",
                    value: cpuMicrosecondsPerMessage.map { .number(($0 * 10).rounded() / 10) } ?? .null
                ),
            ])
        }
    }

    /// The ids received and the last arrival.
    private final class Arrivals: Sendable {
        let state = Mutex<(ids: Set<String>, repeated: Int, last: ContinuousClock.Instant?)>(([], 0, nil))

        func record(_ id: String, at: ContinuousClock.Instant) {
            state.withLock { state in
                if !state.ids.insert(id).inserted { state.repeated += 1 }
                state.last = at
            }
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws -> Report {
        let options = options
        progress("registering \(options.devices) app instances")
        let instances = try await options.target.registerInstances(options.devices)
        progress("connecting them")
        let devices = try await options.target.connect(instances)
        var channels = devices
        defer { for channel in channels { channel.close(promise: nil) } }
        progress("connecting \(options.appServers) app servers over XMPP")
        let arrivals = Arrivals()
        for _ in 0..<options.appServers {
            channels.append(
                try await XMPPBenchAppServer.connect(
                    host: options.xmppHost, port: options.xmppPort, senderID: options.senderID,
                    serverKey: options.serverKey
                ) { id, at in arrivals.record(id, at: at) })
        }
        try await ProcessCPU.waitUntilIdle(pid: options.serverPID)
        let total = options.devices * options.messagesPerDevice
        progress("sending \(total) upstream messages")
        let cpu = CPUMeter(pid: options.serverPID)
        let started = ContinuousClock.now
        for round in 0..<options.messagesPerDevice {
            for (index, channel) in devices.enumerated() {
                let request = UpstreamRequest(
                    messageID: "d\(index)-m\(round)", to: "\(options.senderID)@\(UpstreamRequest.domain)",
                    category: "com.herald.bench", token: instances[index].token, ttlSeconds: 600,
                    data: ["k": "v\(round)"])
                channel.writeAndFlush(MCSFrame.upstream(request), promise: nil)
            }
        }
        let deadline = started + .seconds(120)
        while arrivals.state.withLock({ $0.ids.count }) < total, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let (received, repeated, last) = arrivals.state.withLock { ($0.ids.count, $0.repeated, $0.last) }
        let serverCPUSeconds = cpu.used()
        return Report(
            devices: options.devices, sent: total, received: received, repeated: repeated,
            seconds: ((last ?? ContinuousClock.now) - started).seconds,
            serverCPUSeconds: serverCPUSeconds)
    }
}
