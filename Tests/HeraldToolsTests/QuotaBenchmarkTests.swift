import Foundation
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldTools

/// `herald bench quota` (SEMANTICS T1's benchmark): its sender frames and counts answers,
/// its phases fill the project's window before the excess, and its comparison of slices
/// gives the p99's change with an interval.
@Suite struct QuotaBenchmarkTests {
    /// The quota benchmark's sender reads each answer by its Content-Length: not before all
    /// of it is in, and the next one from where it ends.
    @Test func T1_theQuotaBenchmarksSenderFramesAnswersByTheirLength() throws {
        let first = Array("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\ncontent-length: 5\r\n\r\nabcde".utf8)
        let second = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(try PacedHTTP.answer(in: Array(first.prefix(20))) == nil)
        #expect(try PacedHTTP.answer(in: Array(first.dropLast())) == nil)
        let whole = try #require(try PacedHTTP.answer(in: first + second))
        #expect(whole.status == 429 && whole.length == first.count)
        #expect(try PacedHTTP.answer(in: second)?.status == 200)
        #expect(throws: PacedHTTP.Failure.self) { try PacedHTTP.answer(in: Array("SSH-2.0\r\n\r\n".utf8)) }
        #expect(throws: PacedHTTP.Failure.self) {
            try PacedHTTP.answer(in: Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        }
    }

    /// The sender of `herald bench quota` counts what the server answered a project driven
    /// past its quota, and its outcome reads back from the JSON `herald bench pace` prints.
    @Test(arguments: [Duration.zero, .milliseconds(20)])
    func T1_theQuotaBenchmarksSenderCountsAcceptancesAndRefusals(tick: Duration) async throws {
        try await GatewayHarness.with(clock: ManualClock(), settings: { $0.downstreamPerMinute = 5 }) { harness in
            let base = try #require(HTTPURL(harness.server))
            let token = try await harness.credentials.accessToken(now: harness.node.clock.now())
            // The whole suite starting at once can keep a node's threads from answering for
            // longer than a benchmark waits; what is checked here is the counting.
            let outcome = try await QuotaBenchmark.paced(
                url: base, credentials: harness.credentials, token: token, rate: 40, seconds: 0.5, tick: tick,
                grace: .seconds(120))
            #expect(outcome.accepted == 5)
            #expect(outcome.refused == 15)
            #expect(outcome.other == 0)
            #expect(outcome.latencyNanoseconds.count == 20)
            #expect(outcome.latencyNanoseconds.allSatisfy { $0 > 0 })
            #expect(outcome.cpuNanoseconds > 0)
            let read = try #require(QuotaBenchmark.Outcome(json: try JSONParser.parse(outcome.json.rendered)))
            #expect(read.accepted == 5 && read.refused == 15 && read.other == 0)
            #expect(read.latencyNanoseconds == outcome.latencyNanoseconds)
            #expect(read.cpuNanoseconds == outcome.cpuNanoseconds)
            #expect(QuotaBenchmark.Outcome(json: .object([(key: "accepted", value: .number(1))])) == nil)
        }
    }

    /// The quota benchmark drives its project at exactly the quota for a whole window just
    /// before the excess: from rest, twice the quota would be all accepted for half a
    /// minute (a window's sends may come at once), and the sliding window would repeat
    /// that, so the excess phase would measure bursts of acceptances, not an overload. The
    /// excess then comes in slices, in turns with slices at the quota, and the neighbour's
    /// latencies are pooled by what it was beside.
    @Test func T1_theQuotaBenchmarkFillsTheProjectsWindowThenAlternatesTheExcessWithTheQuota() async throws {
        let calls = Mutex<[(sender: String, rate: Double, seconds: Double)]>([])
        // The neighbour's n-th run answers n µs.
        let neighbour: QuotaBenchmark.Sender = { rate, seconds in
            let made = calls.withLock { calls in
                calls.append(("neighbour", rate, seconds))
                return calls.filter { $0.sender == "neighbour" }.count
            }
            var outcome = QuotaBenchmark.Outcome()
            outcome.accepted = 1
            outcome.latencyNanoseconds = [Int64(made) * 1000]
            return outcome
        }
        // What the overloaded project is answered: 600 at its quota for the window, then
        // one slice at twice it, two at it and one at twice it again.
        let loads = Mutex([(600, 0), (3, 3), (5, 1), (5, 2), (4, 6)])
        let overloaded: QuotaBenchmark.Sender = { rate, seconds in
            calls.withLock { $0.append(("overloaded", rate, seconds)) }
            var outcome = QuotaBenchmark.Outcome()
            (outcome.accepted, outcome.refused) = loads.withLock { $0.removeFirst() }
            return outcome
        }
        let refused: QuotaBenchmark.Sender = { rate, seconds in
            calls.withLock { $0.append(("refused", rate, seconds)) }
            var outcome = QuotaBenchmark.Outcome()
            outcome.refused = 1
            return outcome
        }
        let benchmark = QuotaBenchmark(
            options: .init(
                overloaded: overloaded, neighbour: neighbour, refused: refused, quotaPerMinute: 600, factor: 2,
                neighbourRate: 5, seconds: 0.5, sliceSeconds: 0.3, baselineSeconds: 0.01, serverPID: getpid()))
        let report = try await benchmark.run { _ in }
        let made = calls.withLock { $0 }.filter { $0.sender != "neighbour" }
        #expect(made.map(\.sender) == ["refused"] + Array(repeating: "overloaded", count: 5))
        // At 10/s (600 a minute) for the whole 60 s window; then 0.5 s at 20/s in two
        // slices of 0.25 s (at most 0.3 s each, in a whole number), in turns with
        // slices at 10/s: excess first, then quota first.
        #expect(made[1].rate == 10 && made[1].seconds == 60)
        #expect(made.dropFirst(2).map(\.rate) == [20, 10, 10, 20])
        #expect(made.dropFirst(2).allSatisfy { $0.seconds == 0.25 })
        #expect(report.slices == 2)
        #expect(report.acceptedPerSecond == 14 && report.refused == 9 && report.refusedAtQuota == 3)
        // The neighbour ran alone (1 µs), beside the window's filling (2 µs), beside the
        // slices (3, 4, 5, 6 µs) and alone again (7 µs).
        #expect(report.baselineNeighbour.p50 == 1 && report.afterNeighbour.p50 == 7)
        #expect(report.loadedNeighbour.p50 == 3 && report.loadedNeighbour.p99 == 6)
        #expect(report.atQuotaNeighbour.p50 == 4 && report.atQuotaNeighbour.p99 == 5)
        // Each slice's latencies are kept apart, in the order the slices ran.
        #expect(report.neighbourSlices.map(\.overloaded) == [true, false, false, true])
        #expect(report.neighbourSlices.map(\.latencyNanoseconds) == [[3000], [4000], [5000], [6000]])
        #expect(abs(report.p99Change.percent - 20) < 1e-9)
    }

    /// The quota benchmark's p99 change comes with an interval from resampling whole
    /// slices: narrow when the slices agree, wide when they scatter, the same for the same
    /// samples, and around no change when the two kinds of slice are alike.
    @Test func T1_theQuotaBenchmarksP99ChangeHasAnIntervalFromItsSlices() {
        // Slice i of either kind: 100 latencies of 1…100 µs, scaled.
        func slice(_ scale: Double) -> [Int64] { (1...100).map { Int64(Double($0 * 1000) * scale) } }
        let steady = SliceComparison(
            atQuota: (0..<12).map { _ in slice(1) }, overloaded: (0..<12).map { _ in slice(1.2) })
        let change = steady.p99Change()
        #expect(abs(change.percent - 20) < 0.5)
        #expect(abs(change.low - 20) < 0.5 && abs(change.high - 20) < 0.5)
        // Slices that scatter by ±30% give a wide interval around the same middle.
        let scattered = SliceComparison(
            atQuota: (0..<12).map { slice(1 + 0.3 * sin(Double($0))) },
            overloaded: (0..<12).map { slice(1.2 + 0.36 * cos(Double($0))) })
        let wide = scattered.p99Change()
        #expect(wide.low < wide.percent && wide.percent < wide.high)
        #expect(wide.high - wide.low > 10)
        #expect(scattered.p99Change() == wide)
        // Alike kinds: the interval holds no change.
        let alike = SliceComparison(
            atQuota: (0..<12).map { slice(1 + 0.3 * sin(Double($0))) },
            overloaded: (0..<12).map { slice(1 + 0.3 * sin(Double($0) + 0.5)) })
        let none = alike.p99Change()
        #expect(none.low < 0 && none.high > 0)
        #expect(SliceComparison(atQuota: [], overloaded: [slice(1)]).p99Change().percent == 0)
    }
}
