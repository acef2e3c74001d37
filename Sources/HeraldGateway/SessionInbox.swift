import HeraldCore
import NIOCore
import Synchronization

/// How other threads hand a session events: on its connection's event loop.
final class SessionInbox: Sendable {
    private let handler: NIOLoopBound<DeviceGateway.SessionHandler>
    let eventLoop: any EventLoop
    private let closed = SessionFlag()
    /// When the session next needs a clock tick, in milliseconds (`MCSSession.nextTick`):
    /// set by its handler on the event loop, read by the task that ticks every session.
    private let tickDue = Atomic<Int64>(0)

    init(handler: NIOLoopBound<DeviceGateway.SessionHandler>, eventLoop: any EventLoop) {
        self.handler = handler
        self.eventLoop = eventLoop
    }

    /// Whether the connection is still open.
    var isOpen: Bool { !closed.isSet }

    func close() { closed.isSet = true }

    /// Whether a tick at `now` could do anything for the session. A due time moved earlier
    /// just as this reads it costs at most one tick's delay.
    func needsTick(at now: Timestamp) -> Bool {
        tickDue.load(ordering: .relaxed) <= now.milliseconds
    }

    /// Notes when the session next needs a tick; nil when it never does.
    func nextTick(at due: Timestamp?) {
        tickDue.store(due?.milliseconds ?? .max, ordering: .relaxed)
    }

    func post(_ event: DeviceGateway.Event) {
        eventLoop.execute { self.receive(event) }
    }

    /// Hands the session an event now. Must be called on its event loop.
    func receive(_ event: DeviceGateway.Event) {
        handler.value.handle(event)
    }
}
