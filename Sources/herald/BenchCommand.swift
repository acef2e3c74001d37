import ArgumentParser
import HeraldClient
import HeraldCore
import HeraldTools

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Measure a running Herald.", subcommands: [Send.self])

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "HTTP v1 send throughput and latency over keep-alive HTTP/1.1 connections.")

        @Option(help: "Herald's base URL.") var url = "http://127.0.0.1:8080"
        @Option(help: "A service-account key file of the project to send as.") var credentials: String
        @Option(help: "Concurrent keep-alive connections.") var connections = 64
        @Option(help: "How long to run, in seconds.") var seconds = 10.0
        @Option(help: "The topic to send to.") var topic = "bench"
        @Flag(inversion: .prefixedNo, help: "Send with validate_only (nothing is stored).")
        var validateOnly = true
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            guard let base = HTTPURL(url) else { throw ValidationError("--url must be http://HOST:PORT") }
            let credentials = try ServiceAccountCredentials(keyFile: credentials)
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
