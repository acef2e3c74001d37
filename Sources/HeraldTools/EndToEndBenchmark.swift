public import HeraldClient
public import HeraldCore
import HeraldProtocol
import NIOCore
public import NIOSSL
import Synchronization

/// `herald bench e2e`: latency from the start of a send request to the moment a
/// connected device reads the message, at a fixed send rate spread over many devices;
/// beside it, how long the sender waited for the request's answer.
public struct EndToEndBenchmark: Sendable {
    public struct Options: Sendable {
        public var target: BenchTarget
        public var rate: Int
        public var seconds: Double
        public var devices: Int
        public var senders: Int = 16
        /// Size of a data value sent beside the sequence number.
        public var payloadBytes: Int
        /// The server's process, to read its CPU time while the messages flow.
        public var serverPID: Int32?

        public init(
            target: BenchTarget, rate: Int, seconds: Double, devices: Int, payloadBytes: Int = 0,
            serverPID: Int32? = nil
        ) {
            self.target = target
            self.rate = rate
            self.seconds = seconds
            self.devices = devices
            self.payloadBytes = payloadBytes
            self.serverPID = serverPID
        }
    }

    public struct Report: Sendable {
        public var sent: Int
        public var received: Int
        public var failedSends: Int
        public var seconds: Double
        public var latency: LatencySummary
        /// From the start of each send request to its whole answer.
        public var answer: LatencySummary
        /// The server's CPU time (user and system) from the first send until the last
        /// message was read or the wait for it ended; nil without its process id.
        public var serverCPUSeconds: Double?

        public var json: JSONValue {
            .object([
                (key: "sent", value: .number(Double(sent))), (key: "received", value: .number(Double(received))),
                (key: "failed_sends", value: .number(Double(failedSends))),
                (key: "achieved_rate", value: .number((Double(sent) / seconds).rounded())),
                (key: "p50_us", value: .number(latency.p50)), (key: "p90_us", value: .number(latency.p90)),
                (key: "p99_us", value: .number(latency.p99)), (key: "max_us", value: .number(latency.max)),
                (key: "answer_p50_us", value: .number(answer.p50)), (key: "answer_p99_us", value: .number(answer.p99)),
                (key: "server_cpu_seconds", value: serverCPUSeconds.map { .number($0) } ?? .null),
            ])
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws -> Report {
        let options = options
        let projectID = options.target.credentials.projectID
        let total = Int(Double(options.rate) * options.seconds)
        let origin = ContinuousClock.now
        let receipts = Timeline(count: total)
        let sends = Timeline(count: total)
        let answers = Timeline(count: total)
        progress("registering and connecting \(options.devices) devices")
        let instances = try await options.target.registerInstances(options.devices)
        let tokens = instances.map(\.token)
        var channels: [any Channel] = []
        for instance in instances {
            channels.append(
                try await BenchDevice.connect(
                    host: options.target.gatewayHost, port: options.target.gatewayPort, localAddress: nil,
                    tls: options.target.tls, androidID: instance.androidID, securityToken: instance.securityToken
                ) { stanza, at in
                    if let sequence = stanza.appData.first(where: { $0.key == "seq" }).flatMap({ Int($0.value) }) {
                        receipts.record(sequence, (at - origin).nanoseconds)
                    }
                })
        }
        defer { for channel in channels { channel.close(promise: nil) } }
        let accessToken = try await options.target.credentials.accessToken()
        progress("sending \(total) messages at \(options.rate)/s")
        let next = RequestCounter()
        let failures = RequestCounter()
        let cpu = CPUMeter(pid: options.serverPID)
        let start = ContinuousClock.now
        let path = "/v1/projects/\(projectID)/messages:send"
        let headers = [("Authorization", "Bearer \(accessToken)"), ("Content-Type", "application/json")]
        let tokenList = tokens
        let fill = options.payloadBytes > 0 ? #","fill":"\#(String(repeating: "x", count: options.payloadBytes))""# : ""
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<options.senders {
                group.addTask {
                    try await HTTPConnection.with(host: options.target.server.host, port: options.target.server.port) {
                        connection in
                        while true {
                            let index = next.value.add(1, ordering: .relaxed).oldValue
                            guard index < total else { return }
                            let due = start + .nanoseconds(Int64(Double(index) / Double(options.rate) * 1e9))
                            try await Task.sleep(until: due, clock: .continuous)
                            let body =
                                #"{"message":{"token":"\#(tokenList[index % tokenList.count])","data":{"seq":"\#(index)"\#(fill)},"#
                                + #""android":{"priority":"high"}}}"#
                            sends.record(index, (ContinuousClock.now - origin).nanoseconds)
                            let result = try await connection.request(
                                .POST, path, headers: headers, body: Array(body.utf8))
                            answers.record(index, (ContinuousClock.now - origin).nanoseconds)
                            if result.status != 200 { failures.value.add(1, ordering: .relaxed) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let sendSeconds = (ContinuousClock.now - start).seconds
        let drainDeadline = ContinuousClock.now + .seconds(10)
        while receipts.count < total - failures.value.load(ordering: .relaxed), ContinuousClock.now < drainDeadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let serverCPUSeconds = cpu.used()
        let sent = sends.values
        let received = receipts.values
        let answered = answers.values
        var latencies: [Int64] = []
        var answerLatencies: [Int64] = []
        for index in 0..<total where sent[index] >= 0 {
            if received[index] >= 0 { latencies.append(received[index] - sent[index]) }
            if answered[index] >= 0 { answerLatencies.append(answered[index] - sent[index]) }
        }
        return Report(
            sent: total, received: latencies.count, failedSends: failures.value.load(ordering: .relaxed),
            seconds: sendSeconds,
            latency: LatencySummary(nanoseconds: latencies), answer: LatencySummary(nanoseconds: answerLatencies),
            serverCPUSeconds: serverCPUSeconds)
    }
}

/// Nanosecond timestamps by message sequence number, written from any thread.
final class Timeline: Sendable {
    private let storage: Mutex<(values: [Int64], count: Int)>

    init(count: Int) {
        storage = Mutex((Array(repeating: -1, count: count), 0))
    }

    func record(_ index: Int, _ nanoseconds: Int64) {
        storage.withLock { storage in
            guard index >= 0, index < storage.values.count, storage.values[index] < 0 else { return }
            storage.values[index] = nanoseconds
            storage.count += 1
        }
    }

    var values: [Int64] { storage.withLock { $0.values } }
    var count: Int { storage.withLock { $0.count } }

    /// Forgets every time recorded.
    func reset() {
        storage.withLock { storage in
            storage.values = Array(repeating: -1, count: storage.values.count)
            storage.count = 0
        }
    }
}
