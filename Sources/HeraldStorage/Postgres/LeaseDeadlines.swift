import Synchronization

/// The deadlines of statements waiting for a connection (`withLeasedConnection`), kept in
/// one table that `PostgresStore.run()` checks four times a second. A statement costs an
/// entry here instead of a timer of its own: a timer each woke the timer thread twice a
/// statement, about a tenth of a node's CPU under load.
final class LeaseDeadlines: Sendable {
    /// How often `run()` ends the waits whose deadline passed: a wait lasts up to this much longer.
    static let checkInterval: Duration = .milliseconds(250)

    private enum Slot {
        /// Taken, its continuation not yet here.
        case pending(deadline: ContinuousClock.Instant)
        case waiting(deadline: ContinuousClock.Instant, CheckedContinuation<Void, any Error>)
        /// Cancelled before its continuation came.
        case cancelled
    }

    private struct State {
        var nextID = 0
        var slots: [Int: Slot] = [:]
    }

    private let state = Mutex(State())

    /// Returns once `deadline` has passed and a check saw it; throws `CancellationError`
    /// when the task is cancelled first.
    func wait(until deadline: ContinuousClock.Instant) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            state.slots[state.nextID] = .pending(deadline: deadline)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state in
                    guard case .pending(let deadline) = state.slots[id] else {
                        state.slots[id] = nil
                        return true
                    }
                    state.slots[id] = .waiting(deadline: deadline, continuation)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                switch state.slots[id] {
                case .pending:
                    state.slots[id] = .cancelled
                    return nil
                case .waiting(_, let continuation):
                    state.slots[id] = nil
                    return continuation
                case .cancelled, nil:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Ends the waits whose deadline is `now` or earlier.
    func check(now: ContinuousClock.Instant) {
        let due = state.withLock { state in
            var due: [CheckedContinuation<Void, any Error>] = []
            for (id, slot) in state.slots {
                if case .waiting(let deadline, let continuation) = slot, deadline <= now {
                    state.slots[id] = nil
                    due.append(continuation)
                }
            }
            return due
        }
        for continuation in due { continuation.resume() }
    }

    /// How many waits are in the table (for tests).
    var count: Int { state.withLock { $0.slots.count } }

    /// Checks the deadlines every `checkInterval` until cancelled.
    func run() async {
        while (try? await Task.sleep(for: Self.checkInterval)) != nil {
            check(now: .now)
        }
    }
}
