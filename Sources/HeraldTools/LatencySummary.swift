import HeraldClient

/// Latency percentiles of a benchmark run, in microseconds.
public struct LatencySummary: Sendable {
    public var count: Int
    public var p50: Double
    public var p90: Double
    public var p99: Double
    public var max: Double

    /// Summarizes samples given in nanoseconds.
    public init(nanoseconds samples: [Int64]) {
        let sorted = samples.sorted()
        count = sorted.count
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Swift.min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)
            return Double(sorted[Swift.max(0, index)]) / 1000
        }
        p50 = percentile(0.50)
        p90 = percentile(0.90)
        p99 = percentile(0.99)
        max = Double(sorted.last ?? 0) / 1000
    }
}
