import ArgumentParser
import Foundation
import HeraldClient
import HeraldCore
import HeraldTools
import NIOSSL

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Herald: one given by --url, or a herald serve the benchmark starts and removes.",
        subcommands: [
            Send.self, Connect.self, EndToEnd.self, Fanout.self, Drain.self, Quota.self, Pace.self, Upstream.self,
            WebPush.self, Transports.self, Fleet.self,
        ])

    /// Gateway options shared by the device benchmarks.
    struct GatewayOptions: ParsableArguments {
        @Option(help: "The device gateway, HOST:PORT.") var gateway = "127.0.0.1:5228"
        @Option(help: "The gateway CA certificate to trust.") var ca: String?
        @Flag(help: "Connect to the gateway without TLS.") var plaintext = false

        func endpoint() throws -> (String, Int) {
            let parts = gateway.split(separator: ":")
            guard parts.count == 2, let port = Int(parts[1]) else { throw ValidationError("--gateway is HOST:PORT") }
            return (String(parts[0]), port)
        }

        func tls() throws -> NIOSSLContext? {
            plaintext ? nil : try MCSClientChannel.tlsContext(trusting: ca)
        }

        /// These options, aimed at the gateway of a server the benchmark started.
        func pointed(at server: BenchServer?) -> GatewayOptions {
            guard let server else { return self }
            var options = self
            options.gateway = "127.0.0.1:\(server.gatewayPort)"
            options.ca = server.caPath
            return options
        }
    }

    /// The options of benchmarks that register and connect devices of a project. Without
    /// `--url` the benchmark starts its own `herald serve` (see `BenchServer`).
    struct TargetOptions: ParsableArguments {
        @Option(help: "Herald's base URL; without it the benchmark starts a server of its own.") var url: String?
        @Option(help: "A service-account key file of the project (with --url).") var credentials: String?
        @Option(name: .customLong("api-key"), help: "The project's API key, to register devices (with --url).")
        var apiKey: String?
        @OptionGroup var gatewayOptions: GatewayOptions

        func validate() throws {
            if url != nil, credentials == nil || apiKey == nil {
                throw ValidationError("--url needs --credentials and --api-key.")
            }
        }

        /// The target: the server given by `--url`, or `server`, started for this run.
        func target(server: BenchServer?) throws -> BenchTarget {
            guard let base = HTTPURL(url ?? server?.url ?? ""), let keyFile = credentials ?? server?.keyFile,
                let apiKey = apiKey ?? server?.apiKey
            else { throw ValidationError("--url must be http://HOST:PORT") }
            let gateway = gatewayOptions.pointed(at: server)
            let (host, port) = try gateway.endpoint()
            return BenchTarget(
                server: base, credentials: try serviceAccount(keyFile, at: base), apiKey: apiKey, gatewayHost: host,
                gatewayPort: port, tls: try gateway.tls())
        }
    }

    /// A key file's credentials, asking for tokens at the server benchmarked.
    static func serviceAccount(_ keyFile: String, at base: HTTPURL) throws -> ServiceAccountCredentials {
        var account = try ServiceAccountCredentials(keyFile: keyFile)
        account.tokenURI = base.origin + "/token"
        return account
    }

    /// Runs a benchmark against its target, stopping a server started for it afterwards.
    static func against<Result>(
        _ options: TargetOptions, settings: [String] = [], mozillaPush: Bool = false, json: Bool,
        _ body: (BenchTarget, BenchServer?) async throws -> Result
    ) async throws -> Result {
        let server = try await BenchServer.unless(
            options.url, plaintext: options.gatewayOptions.plaintext, settings: settings, mozillaPush: mozillaPush,
            json: json)
        defer { server?.stop() }
        return try await body(try options.target(server: server), server)
    }

    struct Quota: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "One project driven past its downstream quota beside a project under its own: accepted rate, "
                + "the CPU a refusal costs, and the neighbour's latency.")

        @Option(help: "Herald's base URL.") var url = "http://127.0.0.1:8080"
        @Option(help: "Key file of the project to drive past its quota.") var overloaded: String
        @Option(help: "Key file of the project that stays under its quota.") var neighbour: String
        @Option(help: "Key file of a project whose downstream-per-minute is 0.") var refused: String
        @Option(help: "The overloaded project's downstream-per-minute setting.") var quota = 60_000
        @Option(help: "Offered rate as a multiple of the quota.") var factor = 2.0
        @Option(name: .customLong("neighbour-rate"), help: "The neighbour's sends a second.") var neighbourRate = 200.0
        @Option(help: "How long to drive the load, in seconds.") var seconds = 180.0
        @Option(
            name: .customLong("slice-seconds"),
            help: "At most how long each slice of the load, and of the project at its quota between them, lasts.")
        var sliceSeconds = 15.0
        @Option(name: .customLong("baseline-seconds"), help: "How long to measure the neighbour alone first.")
        var baselineSeconds = 30.0
        @Option(name: .customLong("server-pid"), help: "The server's process id, to read its CPU time.")
        var serverPID: Int32
        @Option(help: "Write the neighbour's latencies of each slice to this file, a JSON object a line.")
        var samples: String?
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            guard HTTPURL(url) != nil else { throw ValidationError("--url must be http://HOST:PORT") }
            // The projects that make load wake every 2 ms; the neighbour, whose latency is
            // measured, at each due time and answer.
            let load = { (keyFile: String) in Pace.sender(url: url, keyFile: keyFile, tickMilliseconds: 2) }
            let benchmark = QuotaBenchmark(
                options: .init(
                    overloaded: load(overloaded),
                    neighbour: Pace.sender(url: url, keyFile: neighbour, tickMilliseconds: 0),
                    refused: load(refused), quotaPerMinute: quota, factor: factor,
                    neighbourRate: neighbourRate, seconds: seconds, sliceSeconds: sliceSeconds,
                    baselineSeconds: baselineSeconds,
                    serverPID: serverPID))
            // The samples are written with or without `--json`.
            let run = { @Sendable (progress: @escaping @Sendable (String) -> Void) in
                let report = try await benchmark.run(progress: progress)
                if let samples { try Self.writeSamples(report, to: samples) }
                return report
            }
            guard let report = try await BenchOutput.run(json: json, run) else { return }
            print(
                "quota/s   offered/s   accepted/s   deviation %   refused   refused at quota   "
                    + "CPU µs per acceptance   per refusal   per refusal in the overload")
            print(
                "\(Int(report.quotaPerSecond))   \(Int(report.offeredPerSecond))   "
                    + "\(String(format: "%.1f", report.acceptedPerSecond))   "
                    + "\(String(format: "%.2f", report.deviationPercent))   \(report.refused)   "
                    + "\(report.refusedAtQuota)   "
                    + "\(Int(report.cpuPerAcceptanceMicroseconds))   \(Int(report.cpuPerRefusalMicroseconds))   "
                    + "\(Int(report.cpuPerRefusalInOverloadMicroseconds))")
            print(
                "neighbour latency µs: alone p50 \(Int(report.baselineNeighbour.p50)) p99 "
                    + "\(Int(report.baselineNeighbour.p99)), again after p50 \(Int(report.afterNeighbour.p50)) p99 "
                    + "\(Int(report.afterNeighbour.p99)); in \(report.slices) slices each, beside the project at "
                    + "its quota p50 \(Int(report.atQuotaNeighbour.p50)) p99 \(Int(report.atQuotaNeighbour.p99)), "
                    + "beside it at \(factor)x its quota p50 \(Int(report.loadedNeighbour.p50)) p99 "
                    + "\(Int(report.loadedNeighbour.p99))")
            let change = report.p99Change
            print(
                "neighbour p99 beside the overload against beside the project at its quota: "
                    + String(
                        format: "%+.1f%% (90%% interval %+.1f%% to %+.1f%%, ", change.percent, change.low, change.high)
                    + "resampling the slices)")
            print(
                "load generator CPU µs per request: the overloaded project's "
                    + "\(Int(report.generatorCPUPerLoadRequestMicroseconds)), the neighbour's "
                    + "\(Int(report.generatorCPUPerNeighbourRequestMicroseconds))")
            if report.failures > 0 { print("answers other than 200 and 429: \(report.failures)") }
        }

        private static func writeSamples(_ report: QuotaBenchmark.Report, to path: String) throws {
            let lines = report.neighbourSlices.map { slice in
                JSONValue.object([
                    (key: "overloaded", value: .bool(slice.overloaded)),
                    (key: "latency_ns", value: .array(slice.latencyNanoseconds.map { .number(Double($0)) })),
                ]).rendered
            }
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        }
    }

    /// One project's topic sends at a fixed rate, its outcome printed as JSON: each sender of
    /// `herald bench quota`, run as a process of its own.
    struct Pace: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Topic sends at a fixed rate; prints the answers and latencies as JSON.", shouldDisplay: false)

        @Option(help: "Herald's base URL.") var url: String
        @Option(name: .customLong("key-file"), help: "The project's service-account key file.") var keyFile: String
        @Option(help: "Sends a second.") var rate: Double
        @Option(help: "For how long, in seconds.") var seconds: Double
        @Option(
            name: .customLong("tick-ms"),
            help: "Wake only this often, in milliseconds (a load whose latency is not measured); 0: at each answer.")
        var tickMilliseconds = 0

        func run() async throws {
            guard let base = HTTPURL(url) else { throw ValidationError("--url must be http://HOST:PORT") }
            let credentials = try ServiceAccountCredentials(keyFile: keyFile)
            let outcome = try await QuotaBenchmark.paced(
                url: base, credentials: credentials, token: try await credentials.accessToken(), rate: rate,
                seconds: seconds, tick: .milliseconds(tickMilliseconds))
            print(outcome.json.rendered)
        }

        /// A sender that runs `herald bench pace` and reads its outcome.
        static func sender(url: String, keyFile: String, tickMilliseconds: Int) -> QuotaBenchmark.Sender {
            { rate, seconds in
                let output = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "herald-pace-" + UUID().uuidString
                ).path
                guard FileManager.default.createFile(atPath: output, contents: nil),
                    let handle = FileHandle(forWritingAtPath: output)
                else { throw ValidationError("cannot write \(output)") }
                defer { try? FileManager.default.removeItem(atPath: output) }
                let process = Process()
                process.executableURL = URL(fileURLWithPath: Bundle.main.executablePath ?? CommandLine.arguments[0])
                process.arguments = [
                    "bench", "pace", "--url", url, "--key-file", keyFile, "--rate", String(rate), "--seconds",
                    String(seconds), "--tick-ms", String(tickMilliseconds),
                ]
                process.standardOutput = handle
                let status = try await withCheckedThrowingContinuation { continuation in
                    process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                    do { try process.run() } catch { continuation.resume(throwing: error) }
                }
                try handle.close()
                guard status == 0, let data = FileManager.default.contents(atPath: output),
                    let outcome = QuotaBenchmark.Outcome(json: try JSONParser.parse(Array(data)))
                else { throw ValidationError("herald bench pace failed (exit status \(status))") }
                return outcome
            }
        }
    }

    struct Fanout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A topic send to N subscribers of which M are connected: accept time, delivery rates, peak RSS.")

        @OptionGroup var targetOptions: TargetOptions
        @Option(help: "Subscribed app instances.") var subscribers = 100_000
        @Option(help: "How many of them are connected devices.") var connected = 10_000
        @Option(name: .customLong("server-pid"), help: "The server's process id, to read its peak RSS and CPU time.")
        var serverPID: Int32?
        @Option(name: .customLong("payload-bytes"), help: "Size of the message's data value.") var payloadBytes = 0
        @Option(help: "Further connected devices whose app instances are not subscribed (a busy node).")
        var others = 0
        @Option(help: "Messages sent one after another, each once the last is everywhere.") var sends = 1
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            // Subscribing N tokens at FCM's 3,000 changes a second (SEMANTICS T2) would take a while.
            let settings = ["topic-ops-per-second=1000000"]
            let report = try await BenchCommand.against(targetOptions, settings: settings, json: json) {
                target, server in
                let benchmark = FanoutBenchmark(
                    options: .init(
                        target: target, subscribers: subscribers, connected: connected,
                        serverPID: serverPID ?? server?.pid, payloadBytes: payloadBytes, others: others,
                        sends: sends))
                return try await BenchOutput.run(json: json, benchmark.run)
            }
            guard let report else { return }
            if report.others > 0 {
                print(
                    "other connected devices, not subscribed: \(report.others), messages they got: \(report.othersReceived)"
                )
            }
            print(
                "send   subscribers   connected   accept ms   connected received   connected/s   all queued s   "
                    + "overall/s   server CPU µs/delivery   peak RSS"
            )
            let rss = report.peakRSSKB.map { "\($0) kB" } ?? "-"
            for (index, send) in report.sends.enumerated() {
                let accept = String(format: "%.2f", send.acceptMilliseconds)
                let allQueued = String(format: "%.2f", send.allQueuedSeconds)
                let cpu = send.cpuMicrosecondsPerDelivery.map { String(format: "%.1f", $0) } ?? "-"
                print(
                    "\(index + 1)   \(report.subscribers)   \(report.connected)   \(accept)   \(send.connectedReceived)   "
                        + "\(Int(send.connectedPerSecond))   \(allQueued)   \(Int(send.overallPerSecond))   \(cpu)   "
                        + (index == report.sends.count - 1 ? rss : "")
                )
            }
        }
    }

    struct Upstream: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "N connected devices each send M upstream messages; app servers on XMPP connections ack them: "
                + "messages a second and the server's CPU per message.")

        @OptionGroup var targetOptions: TargetOptions
        @Option(help: "Connected devices that send.") var devices = 1000
        @Option(help: "Upstream messages each device sends.") var messages = 10
        @Option(name: .customLong("app-servers"), help: "XMPP connections of the app server.") var appServers = 1
        @Option(help: "The plain-TCP XMPP listener, HOST:PORT (with --url).") var xmpp: String?
        @Option(help: "The project's sender id (with --url).") var sender: Int64?
        @Option(name: .customLong("server-key"), help: "The project's server key (with --url).") var serverKey: String?
        @Option(name: .customLong("server-pid"), help: "The server's process id, to read its CPU time.")
        var serverPID: Int32?
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            let report = try await BenchCommand.against(targetOptions, json: json) { target, server in
                let parts = (xmpp ?? server.map { "127.0.0.1:\($0.xmppPort)" } ?? "").split(separator: ":")
                guard parts.count == 2, let port = Int(parts[1]), let senderID = sender ?? server?.senderID,
                    let key = serverKey ?? server?.serverKey
                else { throw ValidationError("--url needs --xmpp HOST:PORT, --sender and --server-key") }
                let benchmark = UpstreamBenchmark(
                    options: .init(
                        target: target, xmppHost: String(parts[0]), xmppPort: port, senderID: senderID,
                        serverKey: key, devices: devices, messagesPerDevice: messages, appServers: appServers,
                        serverPID: serverPID ?? server?.pid))
                return try await BenchOutput.run(json: json, benchmark.run)
            }
            guard let report else { return }
            let cpu = report.cpuMicrosecondsPerMessage.map { String(format: "%.1f", $0) } ?? "-"
            print("devices   sent   received   repeated   seconds   messages/s   server CPU µs/message")
            print(
                "\(report.devices)   \(report.sent)   \(report.received)   \(report.repeated)   "
                    + String(format: "%.2f", report.seconds) + "   \(Int(report.perSecond))   \(cpu)")
        }
    }

    struct WebPush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webpush",
            abstract:
                "Push messages (RFC 8030, VAPID-signed) to N connected Web Push subscriptions: pushes a second, "
                + "server CPU a push, latency to the device.")

        @OptionGroup var targetOptions: TargetOptions
        @Option(help: "Connected devices, each with one subscription.") var devices = 1000
        @Option(help: "Push messages in all, spread over the devices.") var messages = 20_000
        @Option(help: "Concurrent senders (HTTP/1.1 connections).") var senders = 16
        @Option(help: "Pushes a second in all; 0 for as fast as the senders go.") var rate = 0
        @Option(name: .customLong("server-pid"), help: "The server's process id, to read its CPU time.")
        var serverPID: Int32?
        @Flag(
            name: .customLong("mozilla-push"),
            help: "Subscribe as Firefox does, over Mozilla's push protocol on the HTTP port, rather than over MCS.")
        var mozillaPush = false
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            let report = try await BenchCommand.against(targetOptions, mozillaPush: mozillaPush, json: json) {
                target, server in
                var options = WebPushBenchmark.Options(
                    target: target, devices: devices, messages: messages, senders: senders,
                    serverPID: serverPID ?? server?.pid)
                options.rate = rate
                options.mozillaPush = mozillaPush
                let benchmark = WebPushBenchmark(options: options)
                return try await BenchOutput.run(json: json, benchmark.run)
            }
            guard let report else { return }
            let cpu = report.cpuMicrosecondsPerPush.map { String(format: "%.1f", $0) } ?? "-"
            print("devices   sent   received   seconds   pushes/s   server CPU µs/push   p50 ms   p99 ms")
            print(
                "\(report.devices)   \(report.sent)   \(report.received)   " + String(format: "%.2f", report.seconds)
                    + "   \(Int(report.perSecond))   \(cpu)   " + String(format: "%.2f", report.latency.p50 / 1000)
                    + "   " + String(format: "%.2f", report.latency.p99 / 1000))
        }
    }

    struct Drain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "K messages stored for an offline app instance: time to deliver them all once it connects.")

        @OptionGroup var targetOptions: TargetOptions
        @Option(help: "Messages to store before the device connects.") var messages = 10_000
        @Option(name: .customLong("payload-bytes"), help: "Size of each message's data value.") var payloadBytes = 64
        @Option(name: .customLong("server-pid"), help: "The server's process id, to read its CPU time.") var serverPID:
            Int32?
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            // K messages pending for one instance and K sent to it in a minute (D1, T6).
            let settings = [
                "max-pending=\(max(messages, 100))", "device-per-minute=\(max(messages, 240))",
                "device-per-hour=\(max(messages, 5000))",
            ]
            let report = try await BenchCommand.against(targetOptions, settings: settings, json: json) {
                target, server in
                let benchmark = DrainBenchmark(
                    options: .init(
                        target: target, messages: messages, payloadBytes: payloadBytes,
                        serverPID: serverPID ?? server?.pid))
                return try await BenchOutput.run(json: json, benchmark.run)
            }
            guard let report else { return }
            print("messages   refused sends   stored in s   received   drain s   drained/s")
            print(
                "\(report.messages)   \(report.failedSends)   \(String(format: "%.2f", report.queueSeconds))   "
                    + "\(report.received)   \(String(format: "%.3f", report.drainSeconds))   \(Int(report.drainPerSecond))"
            )
        }
    }

    struct Connect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Open N idle device connections; report connect rate, server RSS per connection and server CPU while idle."
        )

        @Option(help: "Herald's base URL; without it the benchmark starts a server of its own.") var url: String?
        @OptionGroup var gatewayOptions: GatewayOptions
        @Option(help: "How many connections.") var connections = 10_000
        @Option(help: "Loopback source addresses to spread connections over, comma-separated.")
        var sources = "127.0.0.1"
        @Option(name: .customLong("server-pid"), help: "The server's process id, to read its RSS.") var serverPID:
            Int32?
        @Option(help: "Seconds to watch the server's CPU with every connection idle.") var idleSeconds = 5.0
        @Flag(
            name: .customLong("mozilla-push"),
            help: "Connect as Firefox does, over Mozilla's push protocol on the HTTP port, rather than over MCS.")
        var mozillaPush = false
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            let server = try await BenchServer.unless(
                url, plaintext: gatewayOptions.plaintext, mozillaPush: mozillaPush, json: json)
            defer { server?.stop() }
            let gatewayOptions = gatewayOptions.pointed(at: server)
            guard let base = HTTPURL(url ?? server?.url ?? "") else {
                throw ValidationError("--url must be http://HOST:PORT")
            }
            let (host, port) = try gatewayOptions.endpoint()
            var options = ConnectBenchmark.Options(
                server: base, gatewayHost: host, gatewayPort: port, tls: try gatewayOptions.tls(),
                connections: connections, sources: sources.split(separator: ",").map(String.init),
                serverPID: serverPID ?? server?.pid)
            options.idleSeconds = idleSeconds
            options.mozillaPush = mozillaPush
            let benchmark = ConnectBenchmark(options: options)
            guard let report = try await BenchOutput.run(json: json, benchmark.run) else { return }
            print(
                "connections   failures   connects/s   server RSS before   after   idle µs/connection/s   kB/connection"
            )
            print(
                "\(report.connections)   \(report.failures)   \(Int(report.connectsPerSecond))   "
                    + "\(report.serverRSSBeforeKB.map(String.init) ?? "-") kB   \(report.serverRSSAfterKB.map(String.init) ?? "-") kB   "
                    + "\(report.idleMicrosecondsPerConnectionSecond.map { String(format: "%.3f", $0) } ?? "-")   "
                    + "\(report.kilobytesPerConnection.map { String(format: "%.2f", $0) } ?? "-")")
        }
    }

    struct EndToEnd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "e2e",
            abstract: "Latency from a send request to receipt on connected devices, at a fixed rate.")

        @OptionGroup var targetOptions: TargetOptions
        @Option(help: "Messages per second.") var rate = 1000
        @Option(help: "How long to send, in seconds.") var seconds = 10.0
        @Option(help: "How many devices share the messages.") var devices = 300
        @Option(name: .customLong("payload-bytes"), help: "Size of a data value sent with each message.")
        var payloadBytes = 0
        @Option(name: .customLong("server-pid"), help: "The server's process id, to read its CPU time.") var serverPID:
            Int32?
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            let report = try await BenchCommand.against(targetOptions, json: json) { target, server in
                let benchmark = EndToEndBenchmark(
                    options: .init(
                        target: target, rate: rate, seconds: seconds, devices: devices, payloadBytes: payloadBytes,
                        serverPID: serverPID ?? server?.pid))
                return try await BenchOutput.run(json: json, benchmark.run)
            }
            guard let report else { return }
            let cpu = report.serverCPUSeconds.map {
                "   \(Int(($0 * 1e6 / Double(max(1, report.received))).rounded()))"
            }
            print(
                "sent   received   failed   rate/s   p50 µs   p90 µs   p99 µs   max µs   answer p50 µs   answer p99 µs"
                    + (cpu == nil ? "" : "   server CPU µs a message"))
            print(
                "\(report.sent)   \(report.received)   \(report.failedSends)   \(Int(Double(report.sent) / report.seconds))   "
                    + "\(Int(report.latency.p50))   \(Int(report.latency.p90))   \(Int(report.latency.p99))   \(Int(report.latency.max))   "
                    + "\(Int(report.answer.p50))   \(Int(report.answer.p99))" + (cpu ?? "")
            )
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "HTTP v1 send throughput and latency over keep-alive HTTP/1.1 connections.")

        @Option(help: "Herald's base URL; without it the benchmark starts a server of its own.") var url: String?
        @Option(help: "A service-account key file of the project to send as (with --url).") var credentials: String?
        @Option(help: "Concurrent keep-alive connections.") var connections = 64
        @Option(help: "How long to run, in seconds.") var seconds = 10.0
        @Option(help: "The topic to send to.") var topic = "bench"
        @Flag(inversion: .prefixedNo, help: "Send with validate_only (nothing is stored).")
        var validateOnly = true
        @Flag(help: "Print the result as JSON.") var json = false

        func validate() throws {
            if url != nil, credentials == nil { throw ValidationError("--url needs --credentials.") }
        }

        func run() async throws {
            let server = try await BenchServer.unless(url, plaintext: true, json: json)
            defer { server?.stop() }
            guard let base = HTTPURL(url ?? server?.url ?? ""), let keyFile = credentials ?? server?.keyFile else {
                throw ValidationError("--url must be http://HOST:PORT")
            }
            let credentials = try BenchCommand.serviceAccount(keyFile, at: base)
            let token = try await credentials.accessToken()
            let body =
                #"{"message":{"topic":"\#(topic)","notification":{"title":"Benchmark","body":"Hello from herald bench"},"#
                + #""data":{"sequence":"1","kind":"bench"},"android":{"priority":"high","ttl":"3600s"}}"#
                + (validateOnly ? #","validate_only":true}"# : "}")
            let benchmark = SendBenchmark(
                options: .init(
                    url: base, projectID: credentials.projectID, accessToken: token, connections: connections,
                    seconds: seconds, body: body))
            let quiet = json
            let report = try await benchmark.run { total in
                if !quiet { print("  \(total) requests") }
            }
            if json {
                print(report.json.rendered)
                return
            }
            print("")
            print(
                "send (\(validateOnly ? "validate_only" : "stored")), \(connections) connections, \(report.seconds) s")
            print("requests   failures   per second   p50 µs   p90 µs   p99 µs   max µs")
            print(
                "\(report.requests)   \(report.failures)   \(Int(report.perSecond))   \(Int(report.latency.p50))   "
                    + "\(Int(report.latency.p90))   \(Int(report.latency.p99))   \(Int(report.latency.max))")
            if let failure = report.firstFailure { print("first failure: \(failure)") }
        }
    }
}

extension BenchCommand {
    struct Transports: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Validated v1 sends over HTTP/1.1, HTTP/1.1 with TLS and HTTP/2 with TLS (drop-in mode's listener) "
                + "of a server it starts: sends a second and server CPU a send, median of alternating rounds.")

        @Option(help: "Requests in flight: HTTP/1.1 connections, or HTTP/2 streams.") var concurrency = 32
        @Option(help: "Seconds each transport runs in a round.") var seconds = 5.0
        @Option(help: "Rounds, in alternating order.") var rounds = 3

        func run() async throws {
            let server = try await BenchServer.withDropIn(json: false)
            defer { server.stop() }
            guard let base = HTTPURL(server.url), let tlsURL = server.dropInURL else {
                throw ValidationError("the server did not start its drop-in listener")
            }
            let credentials = try BenchCommand.serviceAccount(server.keyFile, at: base)
            let benchmark = TransportBenchmark(
                options: .init(
                    plaintextURL: server.url, tlsURL: tlsURL, caPath: server.dropInCAPath,
                    projectID: credentials.projectID, accessToken: try await credentials.accessToken(),
                    concurrency: concurrency, seconds: seconds, rounds: rounds, serverPID: server.pid))
            let results = try await benchmark.run { print($0) }
            print("transport      sends/s   server CPU µs/send   failures   (median of \(rounds) rounds)")
            for result in results {
                let cpu = result.cpuMicrosecondsPerSend.map { String(format: "%.1f", $0) } ?? "-"
                print("\(result.transport.rawValue)   \(Int(result.perSecond))   \(cpu)   \(result.failures)")
            }
        }
    }
}

/// How every `herald bench` subcommand reports: progress lines and a table, or only JSON.
enum BenchOutput {
    /// Runs a benchmark; with `json` prints its report as JSON and answers nil, otherwise
    /// prints its progress lines and answers the report for the caller's table.
    static func run<Report: Sendable>(
        json: Bool, _ benchmark: (@escaping @Sendable (String) -> Void) async throws -> Report
    ) async throws -> Report? where Report: JSONReport {
        let report = try await benchmark { line in if !json { print(line) } }
        if json {
            print(report.json.rendered)
            return nil
        }
        return report
    }
}

/// A benchmark report that can be printed as JSON.
protocol JSONReport {
    var json: JSONValue { get }
}

extension ConnectBenchmark.Report: JSONReport {}
extension EndToEndBenchmark.Report: JSONReport {}
extension FanoutBenchmark.Report: JSONReport {}
extension UpstreamBenchmark.Report: JSONReport {}
extension WebPushBenchmark.Report: JSONReport {}
extension DrainBenchmark.Report: JSONReport {}
extension QuotaBenchmark.Report: JSONReport {}
