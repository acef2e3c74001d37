public import CoreMetrics
import Synchronization

/// Herald's counters, made through one metrics factory (Prometheus in `herald serve`).
///
/// Counters are created once per label set and reused, so counting on the hot path is a
/// dictionary look-up and an atomic add.
public final class HeraldMetrics: Sendable {
    private let factory: any MetricsFactory
    private let counters: Mutex<[String: Counter]> = Mutex([:])

    /// Metrics made by the given factory.
    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// Adds to the counter with this label and dimensions.
    public func increment(_ label: String, _ dimensions: [(String, String)] = [], by amount: Int = 1) {
        var key = label
        for (name, value) in dimensions {
            key += "|\(name)=\(value)"
        }
        let counter = counters.withLock { counters in
            if let existing = counters[key] { return existing }
            let made = Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = made
            return made
        }
        counter.increment(by: amount)
    }
}
