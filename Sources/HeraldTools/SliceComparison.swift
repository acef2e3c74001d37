/// Latencies of two conditions measured in turns, slice by slice, and how much they differ
/// at a percentile. The slices of one run differ among themselves by more than the
/// conditions may (the machine's other work comes and goes), so one run's figure alone
/// does not say whether a difference is real: resampling whole slices (a bootstrap) gives
/// an interval for it as wide as the slices' scatter makes it.
public struct SliceComparison: Sendable {
    /// Each slice's latencies, in nanoseconds.
    public var atQuota: [[Int64]]
    public var overloaded: [[Int64]]

    public init(atQuota: [[Int64]], overloaded: [[Int64]]) {
        self.atQuota = atQuota
        self.overloaded = overloaded
    }

    /// A change in percent, and the 5th and 95th percentiles of its resampled values.
    public struct Change: Sendable, Equatable {
        public var percent: Double
        public var low: Double
        public var high: Double
    }

    /// How much the overloaded slices' pooled p99 exceeds the at-quota slices', in percent,
    /// with a 90% interval from `rounds` resamplings of each kind's slices with replacement.
    /// The resampling is seeded, so a run's samples always give the same interval.
    public func p99Change(rounds: Int = 400) -> Change {
        precondition(rounds >= 20, "too few rounds for a 90% interval")
        func change(_ quota: [[Int64]], _ loaded: [[Int64]]) -> Double {
            let base = quota.summary.p99
            return base > 0 ? (loaded.summary.p99 / base - 1) * 100 : 0
        }
        guard !atQuota.isEmpty, !overloaded.isEmpty else { return Change(percent: 0, low: 0, high: 0) }
        var random = SplitMix64(seed: 1)
        func resample(_ slices: [[Int64]]) -> [[Int64]] {
            slices.indices.map { _ in slices[Int(random.next() % UInt64(slices.count))] }
        }
        let changes = (0..<rounds).map { _ in change(resample(atQuota), resample(overloaded)) }.sorted()
        return Change(
            percent: change(atQuota, overloaded), low: changes[rounds / 20],
            high: changes[rounds - 1 - rounds / 20])
    }
}

extension [[Int64]] {
    /// The percentiles of every slice's latencies pooled.
    var summary: LatencySummary { LatencySummary(nanoseconds: flatMap { $0 }) }
}

/// A small seeded generator (SplitMix64): the same seed gives the same numbers on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
