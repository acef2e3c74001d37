import Synchronization

/// Admits at most `limit` pieces of work at once: the bound that keeps a saturated
/// server from queueing without end in front of the store. Past it, work is refused
/// (the HTTP API answers 503 `UNAVAILABLE` with `Retry-After`).
public final class ConcurrencyGate: Sendable {
    public let limit: Int
    private let current = Atomic<Int>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Takes a place; false when all are taken.
    public func enter() -> Bool {
        if current.add(1, ordering: .acquiringAndReleasing).newValue <= limit { return true }
        current.subtract(1, ordering: .acquiringAndReleasing)
        return false
    }

    /// Gives a place back.
    public func leave() {
        current.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// Places taken now.
    public var occupied: Int { current.load(ordering: .relaxed) }
}
