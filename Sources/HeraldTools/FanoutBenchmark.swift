import Foundation
public import HeraldClient
public import HeraldCore
import HeraldProtocol
import NIOCore
public import NIOSSL
import Synchronization

/// `herald bench fanout`: a topic send to N subscribed registrations of which M are
/// connected devices: time to accept the send, deliveries per second to the connected
/// devices, time until every offline queue holds the message, and the server's peak RSS.
/// Other connected devices, registered but not subscribed, make a busy node beside a
/// small topic.
public struct FanoutBenchmark: Sendable {
    public struct Options: Sendable {
        public var target: BenchTarget
        public var subscribers: Int
        public var connected: Int
        public var serverPID: Int32?
        /// Size of the message's data value (beside a short key naming the benchmark).
        public var payloadBytes: Int
        /// Connected devices with an app instance of the project that is not subscribed.
        public var others: Int
        /// Messages sent to the topic one after another, each once the last is everywhere: the
        /// later ones find the offline queues holding the earlier ones.
        public var sends: Int

        public init(
            target: BenchTarget, subscribers: Int, connected: Int, serverPID: Int32?, payloadBytes: Int = 0,
            others: Int = 0, sends: Int = 1
        ) {
            self.target = target
            self.subscribers = subscribers
            self.connected = connected
            self.serverPID = serverPID
            self.payloadBytes = payloadBytes
            self.others = others
            self.sends = max(1, sends)
        }
    }

    /// What one send to the topic measured.
    public struct Send: Sendable {
        public var subscribers: Int
        public var acceptMilliseconds: Double
        public var connectedReceived: Int
        public var connectedSeconds: Double
        public var allQueuedSeconds: Double
        /// Server CPU seconds from the send until the connected devices had it (with a server pid).
        public var serverCPUSeconds: Double?
        /// Server CPU seconds from the send until every queue held the message (with a server pid).
        public var allQueuedCPUSeconds: Double?

        /// Server CPU per registration reached, from the send until every queue held the message.
        public var cpuMicrosecondsPerDelivery: Double? {
            allQueuedCPUSeconds.map { $0 * 1e6 / Double(subscribers) }
        }

        public var connectedPerSecond: Double { Double(connectedReceived) / connectedSeconds }
        public var overallPerSecond: Double { Double(subscribers) / allQueuedSeconds }

        var fields: [(key: String, value: JSONValue)] {
            [
                (key: "accept_ms", value: .number((acceptMilliseconds * 100).rounded() / 100)),
                (key: "connected_received", value: .number(Double(connectedReceived))),
                (key: "connected_deliveries_per_second", value: .number(connectedPerSecond.rounded())),
                (key: "all_queued_seconds", value: .number((allQueuedSeconds * 100).rounded() / 100)),
                (key: "overall_deliveries_per_second", value: .number(overallPerSecond.rounded())),
                (key: "server_cpu_seconds", value: serverCPUSeconds.map { .number($0) } ?? .null),
                (key: "all_queued_server_cpu_seconds", value: allQueuedCPUSeconds.map { .number($0) } ?? .null),
                (
                    key: "server_cpu_us_per_delivery",
                    value: cpuMicrosecondsPerDelivery.map { .number(($0 * 10).rounded() / 10) } ?? .null
                ),
            ]
        }
    }

    public struct Report: Sendable {
        public var subscribers: Int
        public var connected: Int
        public var others: Int
        /// How many of the other devices received a message: none should, as they are not subscribed.
        public var othersReceived: Int
        /// Each send, in order; the first is the report's headline.
        public var sends: [Send]
        public var peakRSSKB: Int?

        public var first: Send { sends[0] }

        public var json: JSONValue {
            var fields: [(key: String, value: JSONValue)] = [
                (key: "subscribers", value: .number(Double(subscribers))),
                (key: "connected", value: .number(Double(connected))),
                (key: "other_connected", value: .number(Double(others))),
                (key: "other_received", value: .number(Double(othersReceived))),
            ]
            fields += first.fields
            fields.append((key: "peak_rss_kb", value: peakRSSKB.map { .number(Double($0)) } ?? .null))
            if sends.count > 1 {
                fields.append((key: "later_sends", value: .array(sends.dropFirst().map { .object($0.fields) })))
            }
            return .object(fields)
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws -> Report {
        let options = options
        progress("registering \(options.subscribers + options.others) app instances")
        let registered = try await options.target.registerInstances(options.subscribers + options.others)
        let devices = Array(registered.prefix(options.subscribers))
        let accessToken = try await options.target.credentials.accessToken()
        let headers = [
            ("Authorization", "Bearer \(accessToken)"), ("Content-Type", "application/json"),
            ("access_token_auth", "true"),
        ]
        progress("subscribing them to topic bench-fanout")
        try await HTTPConnection.with(host: options.target.server.host, port: options.target.server.port) {
            connection in
            var pending = devices.map(\.token)
            while !pending.isEmpty {
                let batch = Array(pending.prefix(1000))
                pending.removeFirst(batch.count)
                let tokens = batch.map { "\"\($0)\"" }.joined(separator: ",")
                let body = #"{"to":"/topics/bench-fanout","registration_tokens":[\#(tokens)]}"#
                let result = try await connection.request(
                    .POST, "/iid/v1:batchAdd", headers: headers, body: Array(body.utf8))
                let results = (try? JSONParser.parse(result.body))?["results"]?.arrayElements ?? []
                guard result.status == 200, results.count == batch.count else {
                    throw DeviceRegistrar.Failure(description: "batchAdd: \(result.status)")
                }
                // Past the project's topic-change rate (SEMANTICS T2): those tokens again, a moment later.
                let limited = zip(batch, results).filter { $0.1["error"] == .string("RESOURCE_EXHAUSTED") }.map(\.0)
                if let failure = results.first(where: {
                    $0["error"] != nil && $0["error"] != .string("RESOURCE_EXHAUSTED")
                }) {
                    throw DeviceRegistrar.Failure(description: "batchAdd: \(failure.rendered)")
                }
                if !limited.isEmpty {
                    pending.insert(contentsOf: limited, at: 0)
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
        }
        progress("connecting \(options.connected + options.others) devices")
        let origin = ContinuousClock.now
        let receipts = Timeline(count: options.connected)
        let online = Array(devices.prefix(options.connected) + registered.suffix(options.others))
        let othersReceived = Timeline(count: options.others)
        let channels = try await options.target.connect(online) { index, _, at in
            if index < options.connected {
                receipts.record(index, (at - origin).nanoseconds)
            } else {
                // Not subscribed: nothing should reach them.
                othersReceived.record(index - options.connected, (at - origin).nanoseconds)
            }
        }
        defer { for channel in channels { channel.close(promise: nil) } }
        progress("waiting for the server to finish the logins")
        try await ProcessCPU.waitUntilIdle(pid: options.serverPID)
        var sends: [Send] = []
        for index in 0..<options.sends {
            if index > 0 {
                receipts.reset()
                try await ProcessCPU.waitUntilIdle(pid: options.serverPID)
            }
            progress("sending to the topic" + (options.sends > 1 ? " (\(index + 1) of \(options.sends))" : ""))
            sends.append(try await send(receipts: receipts, origin: origin, headers: headers))
        }
        return Report(
            subscribers: options.subscribers, connected: options.connected, others: options.others,
            othersReceived: othersReceived.count, sends: sends,
            peakRSSKB: options.serverPID.flatMap(ProcessMemory.peakResidentKilobytes))
    }

    /// Sends one message to the topic and waits until the connected devices have it and
    /// every queue holds it.
    private func send(receipts: Timeline, origin: ContinuousClock.Instant, headers: [(String, String)])
        async throws -> Send
    {
        let options = options
        let before = try await fanoutCounter(headers: headers)
        let payload = String(repeating: "x", count: options.payloadBytes)
        let cpu = CPUMeter(pid: options.serverPID)
        let sent = ContinuousClock.now
        let result = try await HTTPConnection.with(host: options.target.server.host, port: options.target.server.port) {
            connection in
            try await connection.request(
                .POST, "/v1/projects/\(options.target.credentials.projectID)/messages:send", headers: headers,
                body: Array(#"{"message":{"topic":"bench-fanout","data":{"bench":"\#(payload)"}}}"#.utf8))
        }
        let accepted = ContinuousClock.now
        guard result.status == 200 else {
            throw DeviceRegistrar.Failure(
                description: "send: \(result.status) \(String(decoding: result.body, as: UTF8.self))")
        }
        let deadline = ContinuousClock.now + .seconds(300)
        while receipts.count < options.connected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let serverCPUSeconds = cpu.used()
        let lastReceipt = receipts.values.filter { $0 >= 0 }.max() ?? 0
        let connectedSeconds = Double(lastReceipt) / 1e9 - (sent - origin).seconds
        var allQueued = ContinuousClock.now
        var allQueuedCPU: Double?
        while ContinuousClock.now < deadline {
            if try await fanoutCounter(headers: headers) - before >= Double(options.subscribers) {
                allQueued = ContinuousClock.now
                allQueuedCPU = cpu.used()
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return Send(
            subscribers: options.subscribers, acceptMilliseconds: (accepted - sent).seconds * 1000,
            connectedReceived: receipts.count, connectedSeconds: connectedSeconds,
            allQueuedSeconds: (allQueued - sent).seconds,
            serverCPUSeconds: serverCPUSeconds, allQueuedCPUSeconds: allQueuedCPU)
    }

    /// The server's count of fanout deliveries, from `/metrics`, read with the token in
    /// `HERALD_METRICS_TOKEN` (the variable `herald serve` takes it from).
    private func fanoutCounter(headers: [(String, String)]) async throws -> Double {
        let token = ProcessInfo.processInfo.environment["HERALD_METRICS_TOKEN"] ?? ""
        let result = try await HTTPConnection.with(host: options.target.server.host, port: options.target.server.port) {
            connection in
            try await connection.request(.GET, "/metrics", headers: [("Authorization", "Bearer \(token)")])
        }
        let text = String(decoding: result.body, as: UTF8.self)
        return text.split(separator: "\n").filter { $0.hasPrefix("herald_fanout_deliveries_total") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }
}
