public import HeraldClient
public import HeraldCore
import HeraldProtocol
import NIOCore
import Synchronization

/// `herald bench drain`: K messages stored for an app instance that is offline, then the
/// time from the start of its connection until it has read every one of them.
///
/// The project must allow K pending messages and K messages a device in a minute and an
/// hour (`max-pending`, `device-per-minute`, `device-per-hour`); the bench script sets them.
public struct DrainBenchmark: Sendable {
    public struct Options: Sendable {
        public var target: BenchTarget
        public var messages: Int
        public var payloadBytes: Int
        public var serverPID: Int32?
        public var senders: Int = 16

        public init(target: BenchTarget, messages: Int, payloadBytes: Int, serverPID: Int32?) {
            self.target = target
            self.messages = messages
            self.payloadBytes = payloadBytes
            self.serverPID = serverPID
        }
    }

    public struct Report: Sendable {
        public var messages: Int
        public var payloadBytes: Int
        public var failedSends: Int
        public var queueSeconds: Double
        public var received: Int
        /// From the start of the connection (TCP, TLS, login) to the last message read.
        public var drainSeconds: Double
        /// Server CPU seconds from the connection until every message was read (with a server pid).
        public var serverCPUSeconds: Double?

        public var drainPerSecond: Double { Double(received) / drainSeconds }

        public var json: JSONValue {
            .object([
                (key: "messages", value: .number(Double(messages))),
                (key: "payload_bytes", value: .number(Double(payloadBytes))),
                (key: "failed_sends", value: .number(Double(failedSends))),
                (key: "queue_seconds", value: .number((queueSeconds * 1000).rounded() / 1000)),
                (key: "received", value: .number(Double(received))),
                (key: "drain_seconds", value: .number((drainSeconds * 1000).rounded() / 1000)),
                (key: "drain_per_second", value: .number(drainPerSecond.rounded())),
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
        progress("registering one app instance")
        guard let instance = try await options.target.registerInstances(1, workers: 1).first else {
            throw DeviceRegistrar.Failure(description: "no app instance registered")
        }
        let accessToken = try await options.target.credentials.accessToken()
        let headers = [("Authorization", "Bearer \(accessToken)"), ("Content-Type", "application/json")]
        let path = "/v1/projects/\(projectID)/messages:send"
        let fill = String(repeating: "x", count: options.payloadBytes)
        progress("storing \(options.messages) messages of \(options.payloadBytes) bytes for it while it is offline")
        let next = RequestCounter()
        let failures = RequestCounter()
        let queueStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<options.senders {
                group.addTask {
                    try await HTTPConnection.with(host: options.target.server.host, port: options.target.server.port) {
                        connection in
                        while true {
                            let index = next.value.add(1, ordering: .relaxed).oldValue
                            guard index < options.messages else { return }
                            let body =
                                #"{"message":{"token":"\#(instance.token)","data":{"seq":"\#(index)","fill":"\#(fill)"},"#
                                + #""android":{"priority":"high"}}}"#
                            let result = try await connection.request(
                                .POST, path, headers: headers, body: Array(body.utf8))
                            if result.status != 200 {
                                if failures.value.add(1, ordering: .relaxed).oldValue == 0 {
                                    progress(
                                        "first refused send: \(result.status) \(String(decoding: result.body, as: UTF8.self))"
                                    )
                                }
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let queueSeconds = (ContinuousClock.now - queueStart).seconds
        let expected = options.messages - failures.value.load(ordering: .relaxed)
        progress("connecting the device")
        let received = Timeline(count: options.messages)
        let cpu = CPUMeter(pid: options.serverPID)
        let origin = ContinuousClock.now
        let channel = try await BenchDevice.connect(
            host: options.target.gatewayHost, port: options.target.gatewayPort, localAddress: nil,
            tls: options.target.tls, androidID: instance.androidID, securityToken: instance.securityToken
        ) { stanza, at in
            if let sequence = stanza.appData.first(where: { $0.key == "seq" }).flatMap({ Int($0.value) }) {
                received.record(sequence, (at - origin).nanoseconds)
            }
        }
        defer { channel.close(promise: nil) }
        let deadline = ContinuousClock.now + .seconds(120)
        while received.count < expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        let serverCPUSeconds = cpu.used()
        let last = received.values.max() ?? 0
        return Report(
            messages: options.messages, payloadBytes: options.payloadBytes,
            failedSends: failures.value.load(ordering: .relaxed), queueSeconds: queueSeconds,
            received: received.count, drainSeconds: Double(last) / 1e9,
            serverCPUSeconds: serverCPUSeconds)
    }
}
