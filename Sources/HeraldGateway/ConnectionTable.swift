import HeraldCore
import NIOCore
import Synchronization

/// Every open connection's inbox, grouped by the event loop that runs it, so that one task
/// can tick them all: a broadcast posts one job per loop for each batch of its sessions,
/// not one per session, and each job hands the event to its sessions on their own loop. A
/// tick goes only to sessions that need one then (an idle device's next heartbeat is
/// minutes away), so holding a connection costs next to nothing between its heartbeats.
final class ConnectionTable: Sendable {
    /// Sessions handed an event by one job; a loop goes back to its other work in between.
    static let batchSize = 256

    private struct Loop {
        let eventLoop: any EventLoop
        var inboxes: [UInt64: SessionInbox] = [:]
    }

    private struct State {
        var next: UInt64 = 1
        var loops: [ObjectIdentifier: Loop] = [:]
    }

    private let state = Mutex(State())

    func add(_ inbox: SessionInbox) -> UInt64 {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.loops[ObjectIdentifier(inbox.eventLoop), default: Loop(eventLoop: inbox.eventLoop)].inboxes[id] =
                inbox
            return id
        }
    }

    /// Forgets the connection `add` answered `id` for, on the event loop that runs it.
    func remove(_ id: UInt64, on eventLoop: any EventLoop) {
        _ = state.withLock { $0.loops[ObjectIdentifier(eventLoop)]?.inboxes.removeValue(forKey: id) }
    }

    /// Ticks every session that needs a tick at `now`.
    func tick(now: Timestamp) {
        broadcast(.tick) { $0.needsTick(at: now) }
    }

    func broadcast(_ event: DeviceGateway.Event, to included: (SessionInbox) -> Bool = { _ in true }) {
        let loops = state.withLock { state in
            state.loops.values.map { ($0.eventLoop, $0.inboxes.values.filter(included)) }
        }
        for (eventLoop, inboxes) in loops {
            var start = 0
            while start < inboxes.count {
                let batch = inboxes[start..<min(start + Self.batchSize, inboxes.count)]
                eventLoop.execute {
                    for inbox in batch { inbox.receive(event) }
                }
                start += Self.batchSize
            }
        }
    }

    var count: Int { state.withLock { $0.loops.values.reduce(0) { $0 + $1.inboxes.count } } }
}
