import Synchronization

/// Wakes the readers waiting for something to be written: a generation count that each write
/// moves on, and the waiters of the generation they looked at. A reader takes `mark()` before
/// it reads, and `wait(after:upTo:)` returns at once if a write came in between.
public final class WakeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits that began (their continuation is, or was, in `waiting`, or went on at once).
        var parked: Set<UInt64> = []
        /// Waits that ended (timed out) before they began.
        var ended: Set<UInt64> = []
    }

    private let state = Mutex(State())
    private let nextWaiter = Atomic<UInt64>(0)

    public init() {}

    /// The generation a reader looks at the store from.
    public func mark() -> UInt64 {
        state.withLock { $0.generation }
    }

    /// Something was written: every waiting reader goes on.
    public func wake() {
        // Called after every write of an embedded store: nothing is made when nobody waits.
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation &+= 1
            guard !state.waiting.isEmpty else { return [] }
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Waits until a write after `mark`, `timeout` passes, or the task is cancelled.
    public func wait(after mark: UInt64, upTo timeout: Duration) async {
        let id = nextWaiter.add(1, ordering: .relaxed).newValue
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.park(id, after: mark) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            end(id)
            group.cancelAll()
        }
    }

    private func park(_ id: UInt64, after mark: UInt64) async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.ended.remove(id) != nil { return true }
                state.parked.insert(id)
                guard state.generation == mark else { return true }
                state.waiting[id] = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Ends one wait: resumes it if it still waits; one not begun yet ends as it begins.
    private func end(_ id: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.parked.remove(id) != nil else {
                state.ended.insert(id)
                return nil
            }
            return state.waiting.removeValue(forKey: id)
        }
        continuation?.resume()
    }
}
