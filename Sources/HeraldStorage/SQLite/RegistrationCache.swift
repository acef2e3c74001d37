import HeraldCore
import Synchronization

/// Registrations recently looked up by token, so that a send to one device does not pay
/// for a read transaction each time (measured at about a fifth of a one-to-one send's
/// time in the server). A registration row changes only when its token is deleted or
/// its project is; the store that makes those changes drops what they touched.
///
/// A look-up that read the database while such a change was committing might carry the
/// old row: each change advances `generation`, and a row read before it is not kept.
/// When full, the cache starts again empty, which costs one read per token.
final class RegistrationCache: Sendable {
    private struct State {
        var entries: [String: Registration] = [:]
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    func registration(token: String) -> Registration? {
        state.withLock { $0.entries[token] }
    }

    /// Changes with every `forget` and `forgetAll`; pass it to `keep` from before the read.
    var generation: UInt64 {
        state.withLock { $0.generation }
    }

    /// Keeps `registration` unless something was forgotten since `generation` was read.
    func keep(_ registration: Registration, readAt generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[registration.token] = registration
        }
    }

    /// Called after a change to `token`'s row has committed.
    func forget(token: String) {
        state.withLock { state in
            state.generation &+= 1
            state.entries[token] = nil
        }
    }

    /// Called after a change that may touch any row (a project deleted) has committed.
    func forgetAll() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }

    var count: Int {
        state.withLock { $0.entries.count }
    }
}
