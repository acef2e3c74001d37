public import HeraldClient
public import HeraldCore
import NIOCore
public import NIOHTTP1
import Synchronization

/// `herald bench send`: HTTP v1 send throughput and latency over keep-alive HTTP/1.1
/// connections, each sending one request after another for a fixed time.
public struct SendBenchmark: Sendable {
    /// What to run.
    public struct Options: Sendable {
        public var url: HTTPURL
        public var projectID: String
        public var accessToken: String
        public var connections: Int
        public var seconds: Double
        public var body: String

        public init(
            url: HTTPURL, projectID: String, accessToken: String, connections: Int, seconds: Double, body: String
        ) {
            self.url = url
            self.projectID = projectID
            self.accessToken = accessToken
            self.connections = connections
            self.seconds = seconds
            self.body = body
        }
    }

    /// What a run measured.
    public struct Report: Sendable {
        public var requests: Int
        public var failures: Int
        public var seconds: Double
        public var latency: LatencySummary
        public var firstFailure: String?

        /// Successful requests per second.
        public var perSecond: Double { Double(requests - failures) / seconds }

        /// The report as a JSON object.
        public var json: JSONValue {
            .object([
                (key: "requests", value: .number(Double(requests))),
                (key: "failures", value: .number(Double(failures))),
                (key: "seconds", value: .number(seconds)),
                (key: "per_second", value: .number(perSecond.rounded())),
                (key: "p50_us", value: .number(latency.p50)), (key: "p90_us", value: .number(latency.p90)),
                (key: "p99_us", value: .number(latency.p99)), (key: "max_us", value: .number(latency.max)),
            ])
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    /// Runs the load; `progress` is called about once a second with the requests so far.
    public func run(progress: @escaping @Sendable (Int) -> Void) async throws -> Report {
        let counter = RequestCounter()
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(Int64(options.seconds * 1000))
        let path = "/v1/projects/\(options.projectID)/messages:send"
        let body = Array(options.body.utf8)
        let headers = [("Authorization", "Bearer \(options.accessToken)"), ("Content-Type", "application/json")]
        let url = options.url
        let results = try await withThrowingTaskGroup(of: ([Int64], Int, String?).self) { group in
            group.addTask {
                while ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .seconds(1))
                    progress(counter.value.load(ordering: .relaxed))
                }
                return ([], 0, nil)
            }
            for _ in 0..<options.connections {
                group.addTask {
                    try await HTTPConnection.with(host: url.host, port: url.port) { connection in
                        var samples: [Int64] = []
                        samples.reserveCapacity(100_000)
                        var failures = 0
                        var firstFailure: String?
                        while ContinuousClock.now < deadline {
                            let start = ContinuousClock.now
                            let result = try await connection.request(.POST, path, headers: headers, body: body)
                            let elapsed = ContinuousClock.now - start
                            samples.append(
                                elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds
                                    / 1_000_000_000)
                            if result.status != 200 {
                                failures += 1
                                if firstFailure == nil {
                                    firstFailure = "\(result.status) \(String(decoding: result.body, as: UTF8.self))"
                                }
                            }
                            counter.value.add(1, ordering: .relaxed)
                        }
                        return (samples, failures, firstFailure)
                    }
                }
            }
            var all: [Int64] = []
            var failures = 0
            var firstFailure: String?
            for try await (samples, workerFailures, failure) in group {
                all += samples
                failures += workerFailures
                firstFailure = firstFailure ?? failure
            }
            return (all, failures, firstFailure)
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Report(
            requests: results.0.count, failures: results.1, seconds: seconds,
            latency: LatencySummary(nanoseconds: results.0), firstFailure: results.2)
    }
}

/// A request count shared by the workers of a benchmark.
final class RequestCounter: Sendable {
    let value = Atomic<Int>(0)
}
