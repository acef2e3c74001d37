import Synchronization

/// How many times a store went to its database: each transaction, and each statement run on
/// its own, counted once (`herald_store_calls_total`). What an idle node costs is read here.
public final class StoreCalls: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// The calls so far.
    public var total: Int { count.load(ordering: .relaxed) }

    func add() {
        count.add(1, ordering: .relaxed)
    }

    /// The counter in Prometheus' text format.
    public var exposition: String {
        """
        # TYPE herald_store_calls_total counter
        herald_store_calls_total \(total)

        """
    }
}
