public import NIOCore
import Synchronization

/// The end of a node's HTTP connections at shutdown: once `begin(grace:)` is called, every
/// request still open (one whose body has stalled, or whose client does not read its
/// answers) is closed when the grace runs out, and so is one that opens after, so that a
/// stop is not held by a client that sends or reads nothing. Each connection's
/// `RequestDeadline` registers here.
public final class HTTPShutdown: Sendable {
    private struct State {
        var cutAt: NIODeadline?
        var next: UInt64 = 0
        var connections: [UInt64: @Sendable (NIODeadline) -> Void] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Registers a connection; `cut` is told when it must close (at once if the shutdown began).
    func register(_ cut: @escaping @Sendable (NIODeadline) -> Void) -> UInt64 {
        let (id, began) = state.withLock { state -> (UInt64, NIODeadline?) in
            state.next += 1
            state.connections[state.next] = cut
            return (state.next, state.cutAt)
        }
        if let began { cut(began) }
        return id
    }

    func unregister(_ id: UInt64) {
        _ = state.withLock { $0.connections.removeValue(forKey: id) }
    }

    /// The node stops: every HTTP connection open now or later closes `grace` from now at the latest.
    public func begin(grace: TimeAmount) {
        let deadline = NIODeadline.now() + grace
        let cuts = state.withLock { state -> [@Sendable (NIODeadline) -> Void] in
            state.cutAt = deadline
            return Array(state.connections.values)
        }
        for cut in cuts { cut(deadline) }
    }
}
