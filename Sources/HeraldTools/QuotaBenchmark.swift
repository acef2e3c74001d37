public import HeraldClient
public import HeraldCore
import Synchronization

/// `herald bench quota` (SEMANTICS T1 under load): one project driven at a multiple of its
/// downstream quota while a second project sends under its own, both at fixed rates.
/// Reports the first project's accepted rate against its quota, the server CPU a refusal
/// costs next to an acceptance, and the second project's latency with and without the load.
public struct QuotaBenchmark: Sendable {
    /// Sends one project's topic messages at a rate (sends a second) for a time (seconds).
    /// `herald bench quota` runs each in a process of its own, as app servers of their own
    /// would be: the load's client work then does not hold up the neighbour's in a shared
    /// thread pool and event loops.
    public typealias Sender = @Sendable (_ rate: Double, _ seconds: Double) async throws -> Outcome

    public struct Options: Sendable {
        /// The project driven past its quota.
        public var overloaded: Sender
        /// The project under its quota whose latency is measured.
        public var neighbour: Sender
        /// A project whose quota is 0: every send it makes is refused.
        public var refused: Sender
        /// The overloaded project's `downstream-per-minute`, as set on the server.
        public var quotaPerMinute: Int
        /// The overloaded project's send rate, as a multiple of its quota.
        public var factor: Double
        /// The neighbour's rate, in sends a second.
        public var neighbourRate: Double
        /// How long the overloaded project sends past its quota, in all.
        public var seconds: Double
        /// At most how long each slice of the overload, and of the project at its quota
        /// between them, lasts.
        public var sliceSeconds: Double
        public var baselineSeconds: Double
        public var serverPID: Int32

        public init(
            overloaded: @escaping Sender, neighbour: @escaping Sender, refused: @escaping Sender,
            quotaPerMinute: Int, factor: Double,
            neighbourRate: Double, seconds: Double, sliceSeconds: Double = 15, baselineSeconds: Double,
            serverPID: Int32
        ) {
            self.sliceSeconds = sliceSeconds
            self.overloaded = overloaded
            self.neighbour = neighbour
            self.refused = refused
            self.quotaPerMinute = quotaPerMinute
            self.factor = factor
            self.neighbourRate = neighbourRate
            self.seconds = seconds
            self.baselineSeconds = baselineSeconds
            self.serverPID = serverPID
        }
    }

    /// What one paced sender saw.
    public struct Outcome: Sendable {
        public var accepted = 0
        public var refused = 0
        public var other = 0
        public var latencyNanoseconds: [Int64] = []
        /// The CPU time the sender itself used.
        public var cpuNanoseconds: Int64 = 0

        public init() {}

        /// What `self` and `other` saw together.
        func adding(_ other: Outcome) -> Outcome {
            var sum = self
            sum.accepted += other.accepted
            sum.refused += other.refused
            sum.other += other.other
            sum.latencyNanoseconds += other.latencyNanoseconds
            sum.cpuNanoseconds += other.cpuNanoseconds
            return sum
        }

        /// The sender's CPU per request it made, in microseconds.
        public var cpuPerRequestMicroseconds: Double {
            Double(cpuNanoseconds) / 1000 / Double(max(1, accepted + refused + other))
        }

        public var json: JSONValue {
            .object([
                (key: "accepted", value: .number(Double(accepted))),
                (key: "refused", value: .number(Double(refused))),
                (key: "other", value: .number(Double(other))),
                (key: "latency_ns", value: .array(latencyNanoseconds.map { .number(Double($0)) })),
                (key: "cpu_ns", value: .number(Double(cpuNanoseconds))),
            ])
        }

        /// Reads what `json` wrote.
        public init?(json: JSONValue) {
            guard let accepted = json["accepted"]?.numberValue, let refused = json["refused"]?.numberValue,
                let other = json["other"]?.numberValue, let latencies = json["latency_ns"]?.arrayElements,
                let cpu = json["cpu_ns"]?.numberValue
            else { return nil }
            cpuNanoseconds = Int64(cpu)
            self.accepted = Int(accepted)
            self.refused = Int(refused)
            self.other = Int(other)
            latencyNanoseconds = latencies.compactMap { $0.numberValue.map { Int64($0) } }
        }
    }

    public struct Report: Sendable {
        public var quotaPerSecond: Double
        public var offeredPerSecond: Double
        public var acceptedPerSecond: Double
        public var refused: Int
        /// Sends refused while the project sent at exactly its quota between the slices of
        /// the overload (a window's edges).
        public var refusedAtQuota: Int
        /// How many slices the overload, and the project at its quota, were cut into.
        public var slices: Int
        /// Answers other than 200 and 429, over every phase: a sound run has none.
        public var failures: Int
        public var baselineNeighbour: LatencySummary
        /// The neighbour alone again after the load: how far the machine drifted meanwhile.
        public var afterNeighbour: LatencySummary
        public var cpuPerAcceptanceMicroseconds: Double
        public var cpuPerRefusalMicroseconds: Double
        /// The server CPU the overload's slices took beyond the at-quota slices', per refusal
        /// more: what a refusal costs in the overload itself, where some are decided by the
        /// route rather than early.
        public var cpuPerRefusalInOverloadMicroseconds: Double
        /// What the load generator spent a request, sending the overloaded project's
        /// requests and the neighbour's: CPU the machine's two cores lent the client.
        public var generatorCPUPerLoadRequestMicroseconds: Double
        public var generatorCPUPerNeighbourRequestMicroseconds: Double
        /// The neighbour's latencies in each slice, in the order they were answered, with
        /// whether the slice was the overload's: where in a slice the slow answers fall.
        public var neighbourSlices: [(overloaded: Bool, latencyNanoseconds: [Int64])]

        /// How far the accepted rate is from the quota, in percent.
        public var deviationPercent: Double { (acceptedPerSecond / quotaPerSecond - 1) * 100 }

        /// The neighbour beside the overloaded project while it sent at exactly its quota,
        /// in the slices between the overload's: the same accepted load without the excess,
        /// measured in turn with it, so that the machine's drift does not pass for the
        /// overload's effect.
        public var atQuotaNeighbour: LatencySummary { neighbour(overloaded: false).summary }
        /// The neighbour beside the overload, over all its slices.
        public var loadedNeighbour: LatencySummary { neighbour(overloaded: true).summary }

        /// How much the neighbour's p99 beside the overload differs from its p99 beside the
        /// project at its quota, in percent, with a 90% interval for that figure.
        public var p99Change: SliceComparison.Change {
            SliceComparison(atQuota: neighbour(overloaded: false), overloaded: neighbour(overloaded: true)).p99Change()
        }

        /// The neighbour's latencies of one kind of slice, slice by slice.
        private func neighbour(overloaded: Bool) -> [[Int64]] {
            neighbourSlices.filter { $0.overloaded == overloaded }.map(\.latencyNanoseconds)
        }

        public var json: JSONValue {
            .object(
                [
                    (key: "quota_per_second", value: .number(quotaPerSecond)),
                    (key: "offered_per_second", value: .number(offeredPerSecond.rounded())),
                    (key: "accepted_per_second", value: .number((acceptedPerSecond * 10).rounded() / 10)),
                    (key: "deviation_percent", value: .number((deviationPercent * 100).rounded() / 100)),
                    (key: "refused", value: .number(Double(refused))),
                    (key: "refused_at_quota", value: .number(Double(refusedAtQuota))),
                    (key: "slices", value: .number(Double(slices))),
                    (key: "failures", value: .number(Double(failures))),
                    (key: "neighbour_p50_us_alone", value: .number(baselineNeighbour.p50.rounded())),
                    (key: "neighbour_p99_us_alone", value: .number(baselineNeighbour.p99.rounded())),
                    (key: "neighbour_p50_us_alone_after", value: .number(afterNeighbour.p50.rounded())),
                    (key: "neighbour_p99_us_alone_after", value: .number(afterNeighbour.p99.rounded())),
                    (key: "neighbour_p50_us_at_quota", value: .number(atQuotaNeighbour.p50.rounded())),
                    (key: "neighbour_p99_us_at_quota", value: .number(atQuotaNeighbour.p99.rounded())),
                    (key: "neighbour_p50_us_loaded", value: .number(loadedNeighbour.p50.rounded())),
                    (key: "neighbour_p99_us_loaded", value: .number(loadedNeighbour.p99.rounded())),
                    (key: "cpu_per_acceptance_us", value: .number(cpuPerAcceptanceMicroseconds.rounded())),
                    (key: "cpu_per_refusal_us", value: .number(cpuPerRefusalMicroseconds.rounded())),
                    (
                        key: "cpu_per_refusal_in_overload_us",
                        value: .number(cpuPerRefusalInOverloadMicroseconds.rounded())
                    ),
                    (
                        key: "generator_cpu_per_load_request_us",
                        value: .number(generatorCPUPerLoadRequestMicroseconds.rounded())
                    ),
                    (
                        key: "generator_cpu_per_neighbour_request_us",
                        value: .number(generatorCPUPerNeighbourRequestMicroseconds.rounded())
                    ),
                ] + p99ChangeFields)
        }

        private var p99ChangeFields: [(key: String, value: JSONValue)] {
            let change = p99Change
            return [
                (key: "neighbour_p99_change_percent", value: .number((change.percent * 10).rounded() / 10)),
                (key: "neighbour_p99_change_low_percent", value: .number((change.low * 10).rounded() / 10)),
                (key: "neighbour_p99_change_high_percent", value: .number((change.high * 10).rounded() / 10)),
            ]
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws -> Report {
        let options = options
        let pid = options.serverPID
        let quotaPerSecond = Double(options.quotaPerMinute) / 60
        let offered = quotaPerSecond * options.factor
        let phase = options.baselineSeconds

        progress("idle: \(phase) s")
        let idle = try await Self.cpu(pid: pid) { try await Task.sleep(for: .milliseconds(Int64(phase * 1000))) }
        let idlePerSecond = idle.seconds / phase

        progress("acceptances: the neighbour alone at \(Int(options.neighbourRate))/s for \(phase) s")
        let alone = try await Self.cpu(pid: pid) { try await options.neighbour(options.neighbourRate, phase) }
        let perAcceptance = max(0, alone.seconds - idlePerSecond * phase) / Double(max(1, alone.value.accepted))

        progress("refusals: a project with quota 0 at \(Int(offered))/s for \(phase) s")
        let refusals = try await Self.cpu(pid: pid) { try await options.refused(offered, phase) }
        let perRefusal = max(0, refusals.seconds - idlePerSecond * phase) / Double(max(1, refusals.value.refused))

        // The overloaded project first sends at exactly its quota for a window, so that its
        // window is full when the excess starts: from a project at rest, the first half
        // minute at twice the quota is all within the quota (the window allows a minute's
        // sends at once), and the sliding window then repeats that pattern: half minutes of
        // all accepted and all refused, not an overload.
        progress("at quota: the project at \(Int(quotaPerSecond))/s beside the neighbour for \(Self.windowSeconds) s")
        let warm = try await Self.beside(
            options.overloaded, rate: quotaPerSecond, seconds: Self.windowSeconds, options: options)

        // Then the overload in slices, each beside a slice of the project at its quota, in
        // turns (excess first, then quota first): the machine's drift over minutes falls on
        // both alike. A full window stays full either way, so that acceptances stay at the
        // quota in every slice.
        let slices = max(1, Int((options.seconds / options.sliceSeconds).rounded(.up)))
        let slice = options.seconds / Double(slices)
        var excess = (load: Outcome(), neighbour: Outcome())
        var atQuota = (load: Outcome(), neighbour: Outcome())
        // Server CPU seconds in each kind of slice.
        var cpu = (excess: 0.0, atQuota: 0.0)
        var neighbourSlices: [(overloaded: Bool, latencyNanoseconds: [Int64])] = []
        for round in 0..<slices {
            for overloaded in round % 2 == 0 ? [true, false] : [false, true] {
                let rate = overloaded ? offered : quotaPerSecond
                progress("slice \(round + 1) of \(slices): the project at \(Int(rate))/s for \(slice) s")
                let (outcome, seconds) = try await Self.cpu(pid: pid) {
                    try await Self.beside(options.overloaded, rate: rate, seconds: slice, options: options)
                }
                neighbourSlices.append((overloaded, outcome.neighbour.latencyNanoseconds))
                if overloaded {
                    excess = (excess.load.adding(outcome.load), excess.neighbour.adding(outcome.neighbour))
                    cpu.excess += seconds
                } else {
                    atQuota = (atQuota.load.adding(outcome.load), atQuota.neighbour.adding(outcome.neighbour))
                    cpu.atQuota += seconds
                }
            }
        }

        progress("the neighbour alone again for \(phase) s")
        let after = try await options.neighbour(options.neighbourRate, phase)
        return Report(
            quotaPerSecond: quotaPerSecond, offeredPerSecond: offered,
            acceptedPerSecond: Double(excess.load.accepted) / options.seconds, refused: excess.load.refused,
            refusedAtQuota: atQuota.load.refused, slices: slices,
            failures: [
                alone.value, refusals.value, warm.load, warm.neighbour, excess.load, excess.neighbour, atQuota.load,
                atQuota.neighbour, after,
            ]
            .map(\.other).reduce(0, +),
            baselineNeighbour: LatencySummary(nanoseconds: alone.value.latencyNanoseconds),
            afterNeighbour: LatencySummary(nanoseconds: after.latencyNanoseconds),
            cpuPerAcceptanceMicroseconds: perAcceptance * 1e6, cpuPerRefusalMicroseconds: perRefusal * 1e6,
            cpuPerRefusalInOverloadMicroseconds: max(0, cpu.excess - cpu.atQuota)
                / Double(max(1, excess.load.refused - atQuota.load.refused)) * 1e6,
            generatorCPUPerLoadRequestMicroseconds: excess.load.cpuPerRequestMicroseconds,
            generatorCPUPerNeighbourRequestMicroseconds: excess.neighbour.cpuPerRequestMicroseconds,
            neighbourSlices: neighbourSlices)
    }

    /// The downstream quota's window (SEMANTICS T1, `Quotas.windowMilliseconds(.downstream)`),
    /// in seconds: the tools do not link the delivery module for one number.
    static let windowSeconds = 60.0

    /// A project at `rate` and the neighbour at its rate, side by side.
    static func beside(
        _ sender: @escaping Sender, rate: Double, seconds: Double, options: Options
    ) async throws -> (load: Outcome, neighbour: Outcome) {
        async let load = sender(rate, seconds)
        async let neighbour = options.neighbour(options.neighbourRate, seconds)
        return try await (load, neighbour)
    }

    /// Runs `body` and answers the server CPU seconds it took.
    static func cpu<T: Sendable>(pid: Int32, _ body: () async throws -> T) async throws -> (value: T, seconds: Double) {
        let meter = CPUMeter(pid: pid)
        let value = try await body()
        return (value, meter.used() ?? 0)
    }

    /// Sends topic messages at a fixed rate for a time over a few keep-alive connections,
    /// from a thread of its own that costs the machine little (`PacedHTTP`). With a `tick`
    /// (a load, whose latency is not measured) it wakes only that often. Answers still out
    /// when the time is up are waited for `grace` more.
    public static func paced(
        url: HTTPURL, credentials: ServiceAccountCredentials, token: String, rate: Double, seconds: Double,
        tick: Duration = .zero, grace: Duration = .seconds(10)
    ) async throws -> Outcome {
        let body = #"{"message":{"topic":"quota-bench","data":{"kind":"bench"}}}"#
        let request =
            "POST /v1/projects/\(credentials.projectID)/messages:send HTTP/1.1\r\nHost: \(url.host):\(url.port)\r\n"
            + "Authorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let run = try await PacedHTTP(
            host: url.host, port: url.port, request: Array(request.utf8), rate: rate, seconds: seconds,
            connections: max(1, min(32, Int(rate / 200))), tick: tick.nanoseconds, grace: grace.nanoseconds
        ).runOnThread()
        var outcome = Outcome()
        for status in run.statuses {
            switch status {
            case 200: outcome.accepted += 1
            case 429: outcome.refused += 1
            default: outcome.other += 1
            }
        }
        outcome.latencyNanoseconds = run.latencyNanoseconds
        outcome.cpuNanoseconds = run.cpuNanoseconds
        return outcome
    }
}
