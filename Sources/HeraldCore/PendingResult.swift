import Synchronization

/// A value that work running elsewhere (a `WorkQueue` job, or the one caller making a value
/// every other caller meanwhile waits for) will produce, awaited by whoever needs it; a
/// waiter whose task is cancelled stops waiting with `CancellationError`.
public final class PendingResult<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// Sets the result and wakes every waiter; later calls change nothing.
    public func resolve(_ result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// The result, once there is one.
    public var value: Value {
        get async throws {
            let id = state.withLock { state in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let known = state.withLock { state -> Result<Value, any Error>? in
                        if let result = state.result { return result }
                        state.waiters[id] = continuation
                        return nil
                    }
                    if let known { continuation.resume(with: known) }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }
}
