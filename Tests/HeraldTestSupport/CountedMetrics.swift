public import HeraldTelemetry
import Prometheus

/// Herald's counters kept in a registry of their own, for a test to read.
public struct CountedMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    /// What the code under test counts with.
    public let metrics: HeraldMetrics

    public init() {
        metrics = HeraldMetrics(factory: PrometheusMetricsFactory(registry: registry))
    }

    /// The count of one series, `name{label="value"}` as Prometheus writes it; 0 when never counted.
    public func count(_ series: String) -> Int {
        var text: [UInt8] = []
        registry.emit(into: &text)
        let line = String(decoding: text, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(series + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }
}
