import Crypto
import Foundation
public import HeraldClient
public import HeraldCore
import HeraldProtocol
import NIOCore

/// `herald bench webpush`: N connected devices each subscribed to Web Push for one VAPID
/// key; senders post M push messages (aes128gcm-sized bodies, each with its VAPID
/// credential, verified by the server) spread over the devices. Reports pushes a second, the
/// server's CPU a push, and the latency from the post to the device.
public struct WebPushBenchmark: Sendable {
    public struct Options: Sendable {
        public var target: BenchTarget
        public var devices: Int
        public var messages: Int
        public var senders: Int
        /// Pushes a second in all; 0 posts each as soon as the sender's last is answered.
        public var rate: Int = 0
        public var serverPID: Int32?
        /// Subscribe as Firefox does, over Mozilla's push protocol (WIRE.md §8b), not MCS.
        public var mozillaPush = false

        public init(target: BenchTarget, devices: Int, messages: Int, senders: Int, serverPID: Int32?) {
            self.target = target
            self.devices = devices
            self.messages = messages
            self.senders = senders
            self.serverPID = serverPID
        }
    }

    public struct Report: Sendable {
        public var devices: Int
        public var sent: Int
        public var received: Int
        public var seconds: Double
        public var serverCPUSeconds: Double?
        public var latency: LatencySummary

        public var perSecond: Double { Double(sent) / seconds }
        public var cpuMicrosecondsPerPush: Double? { serverCPUSeconds.map { $0 * 1e6 / Double(max(sent, 1)) } }

        public var json: JSONValue {
            .object([
                (key: "devices", value: .number(Double(devices))), (key: "sent", value: .number(Double(sent))),
                (key: "received", value: .number(Double(received))),
                (key: "seconds", value: .number((seconds * 1000).rounded() / 1000)),
                (key: "per_second", value: .number(perSecond.rounded())),
                (
                    key: "server_cpu_us_per_push",
                    value: cpuMicrosecondsPerPush.map { .number(($0 * 10).rounded() / 10) } ?? .null
                ),
                (key: "latency_p50_ms", value: .number((latency.p50 / 10).rounded() / 100)),
                (key: "latency_p99_ms", value: .number((latency.p99 / 10).rounded() / 100)),
            ])
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws -> Report {
        let options = options
        let vapid = P256.Signing.PrivateKey()
        let key = Base64URL.encode(Array(vapid.publicKey.x963Representation))
        progress("subscribing \(options.devices) devices to Web Push")
        let origin = ContinuousClock.now
        let arrivals = Timeline(count: options.messages)
        let arrived: @Sendable ([UInt8]) -> Void = { body in
            arrivals.record(body.prefix(8).reduce(0) { $0 << 8 | Int($1) }, (ContinuousClock.now - origin).nanoseconds)
        }
        let channels: [(instance: BenchInstance?, token: String)]
        let devices: [any Channel]
        if options.mozillaPush {
            (channels, devices) = try await subscribeOverMozillaPush(key: key, arrived: arrived)
        } else {
            let subscribed = try await subscribe(key: key)
            channels = subscribed.map { ($0.instance, $0.token) }
            devices = try await options.target.connect(subscribed.map(\.instance)) { _, stanza, _ in
                arrived(Array(stanza.rawData))
            }
        }
        defer { for device in devices { device.close(promise: nil) } }
        let authorization = try VAPID.authorization(
            privateKey: Array(vapid.rawRepresentation), publicKey: Array(vapid.publicKey.x963Representation),
            audience: options.target.server.origin, subject: "mailto:bench@herald.invalid",
            expiresAt: SystemClock().now().seconds + 3600)
        try await ProcessCPU.waitUntilIdle(pid: options.serverPID)
        progress("posting \(options.messages) push messages from \(options.senders) senders")
        let cpu = CPUMeter(pid: options.serverPID)
        let sends = Timeline(count: options.messages)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<options.senders {
                group.addTask {
                    try await HTTPConnection.with(host: options.target.server.host, port: options.target.server.port) {
                        connection in
                        for sequence in stride(from: sender, to: options.messages, by: options.senders) {
                            if options.rate > 0 {
                                try await Task.sleep(
                                    until: started + .nanoseconds(Int64(sequence) * 1_000_000_000 / Int64(options.rate))
                                )
                            }
                            var body = (0..<8).map { UInt8(truncatingIfNeeded: sequence >> (56 - 8 * $0)) }
                            body += [UInt8](repeating: 0x5A, count: 112)
                            sends.record(sequence, (ContinuousClock.now - origin).nanoseconds)
                            let result = try await connection.request(
                                .POST, "/wp/" + channels[sequence % channels.count].token,
                                headers: [
                                    ("TTL", "60"), ("Content-Encoding", "aes128gcm"),
                                    ("Authorization", authorization),
                                ], body: body)
                            guard result.status == 201 else {
                                throw DeviceRegistrar.Failure(
                                    description:
                                        "push: \(result.status) \(String(decoding: result.body, as: UTF8.self))")
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let sent = ContinuousClock.now
        let deadline = sent + .seconds(30)
        while arrivals.count < options.messages, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let serverCPUSeconds = cpu.used()
        let latencies = zip(sends.values, arrivals.values).compactMap { send, arrival in
            arrival >= 0 && send >= 0 ? arrival - send : nil
        }
        return Report(
            devices: options.devices, sent: options.messages, received: arrivals.count,
            seconds: (sent - started).seconds,
            serverCPUSeconds: serverCPUSeconds,
            latency: LatencySummary(nanoseconds: latencies))
    }

    /// Connects devices as Firefox does, each registering one channel for the VAPID key.
    private func subscribeOverMozillaPush(key: String, arrived: @escaping @Sendable ([UInt8]) -> Void) async throws
        -> (channels: [(instance: BenchInstance?, token: String)], connections: [any Channel])
    {
        let server = options.target.server
        return try await withThrowingTaskGroup(of: (String, any Channel).self) { group in
            for _ in 0..<options.devices {
                group.addTask {
                    let client = try await MozillaPushBenchClient.connect(
                        host: server.host, port: server.port, onNotification: arrived)
                    let endpoint = try await client.register(key: key)
                    return (String(endpoint.split(separator: "/").last ?? ""), client.channel)
                }
            }
            var made: (channels: [(instance: BenchInstance?, token: String)], connections: [any Channel]) = ([], [])
            for try await (token, channel) in group {
                made.channels.append((nil, token))
                made.connections.append(channel)
            }
            return made
        }
    }

    /// Checks in devices and makes each a push channel for the VAPID key.
    private func subscribe(key: String) async throws -> [(instance: BenchInstance, token: String)] {
        let options = options
        let registrar = try DeviceRegistrar(server: options.target.server.text)
        let workers = 16
        return try await withThrowingTaskGroup(of: [(instance: BenchInstance, token: String)].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var made: [(instance: BenchInstance, token: String)] = []
                    for index in stride(from: worker, to: options.devices, by: workers) {
                        let (androidID, securityToken) = try await registrar.checkin(existing: nil)
                        let token = try await registrar.register3(
                            androidID: androidID, securityToken: securityToken,
                            fields: [
                                ("app", "org.herald.bench"), ("device", String(androidID)), ("sender", key),
                                ("X-subtype", "wp:bench#\(index)"),
                            ])
                        made.append(
                            (BenchInstance(androidID: androidID, securityToken: securityToken, token: token), token))
                    }
                    return made
                }
            }
            var all: [(instance: BenchInstance, token: String)] = []
            for try await made in group { all += made }
            return all
        }
    }
}
