import Synchronization

/// Wakes a node's waiting reads of Web Push receipt subscriptions (`GET /wp/r/…` with
/// `Prefer: wait`) when a receipt for one arrives, instead of each read polling the store.
///
/// The relay says which queued message's acknowledgement makes a receipt for which
/// subscription (`expect`); the gateway says which messages its devices acknowledged,
/// once that is written (`acknowledged`); a waiting read of a subscription is then woken.
/// A message sent through another node is acknowledged there: its reader learns of the
/// receipt from the store within the relay's slower look for shared stores.
public final class PushReceiptSignal: Sendable {
    struct State {
        /// The subscription each expected message's receipt goes to, by persistent id.
        var expected: [String: String] = [:]
        /// The waiting reads, by subscription and then by their id.
        var waiting: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        /// Reads that have begun to wait (their continuation is or was in `waiting`).
        var parked: Set<UInt64> = []
        /// Reads whose wait ended (timed out) before they began to wait.
        var finished: Set<UInt64> = []
        /// Announcements so far, and the last one of each subscription: a read that looked
        /// at the store before an announcement does not wait for the next.
        var generation: UInt64 = 0
        var announced: [String: UInt64] = [:]
    }

    /// The most messages expected at once; past it the oldest expectations are forgotten
    /// (their readers still see the receipt when their wait ends).
    static let maximumExpected = 100_000

    private let state = Mutex(State())
    private let expectedCount = Atomic<Int>(0)
    private let nextWaiter = Atomic<UInt64>(0)

    public init() {}

    /// The message with `persistentID`, once acknowledged, makes a receipt for `subscription`.
    public func expect(persistentID: String, subscription: String) {
        state.withLock { state in
            if state.expected.count >= Self.maximumExpected { state.expected.removeAll() }
            state.expected[persistentID] = subscription
            expectedCount.store(state.expected.count, ordering: .relaxed)
        }
    }

    /// Messages acknowledged and written: wakes the reads of their receipts' subscriptions.
    public func acknowledged(_ persistentIDs: some Sequence<String>) {
        guard expectedCount.load(ordering: .relaxed) > 0 else { return }
        let subscriptions = state.withLock { state in
            let found = Set(persistentIDs.compactMap { state.expected.removeValue(forKey: $0) })
            expectedCount.store(state.expected.count, ordering: .relaxed)
            return found
        }
        announce(subscriptions)
    }

    /// Receipts were written for `subscriptions`: wakes their reads.
    public func announce(_ subscriptions: some Sequence<String>) {
        let woken = state.withLock { state in
            state.generation += 1
            if state.announced.count >= Self.maximumExpected { state.announced.removeAll() }
            return subscriptions.flatMap { subscription in
                state.announced[subscription] = state.generation
                return state.waiting.removeValue(forKey: subscription)?.values.map { $0 } ?? []
            }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Reads waiting, or remembered as done before they began to wait: none once every read
    /// has ended.
    var readsHeld: Int {
        state.withLock { state in
            state.waiting.values.reduce(0) { $0 + $1.count } + state.parked.count + state.finished.count
        }
    }

    /// The point a read looks at the store from: take it before the read, and pass it to
    /// `wait`, so that a receipt announced in between ends the wait at once.
    public func mark() -> UInt64 {
        state.withLock { $0.generation }
    }

    /// Waits until a receipt for `subscription` is announced after `mark`, `timeout`
    /// passes, or the task is cancelled.
    public func wait(for subscription: String, after mark: UInt64, upTo timeout: Duration) async {
        let id = nextWaiter.add(1, ordering: .relaxed).newValue
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.park(id, on: subscription, after: mark) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            wake(id, on: subscription)
            group.cancelAll()
        }
    }

    private func park(_ id: UInt64, on subscription: String, after mark: UInt64) async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.finished.remove(id) != nil { return true }
                if state.announced[subscription, default: 0] > mark { return true }
                state.waiting[subscription, default: [:]][id] = continuation
                state.parked.insert(id)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Ends one read's wait: resumes it if it still waits, and forgets it.
    private func wake(_ id: UInt64, on subscription: String) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.parked.remove(id) != nil else {
                // Not waiting yet: its wait, when it begins, ends at once.
                state.finished.insert(id)
                return nil
            }
            let continuation = state.waiting[subscription]?.removeValue(forKey: id)
            if state.waiting[subscription]?.isEmpty == true { state.waiting[subscription] = nil }
            return continuation
        }
        continuation?.resume()
    }
}
