import NIOCore

/// How other threads hand a session events: on its connection's event loop.
final class SessionInbox: Sendable {
    private let handler: NIOLoopBound<DeviceGateway.SessionHandler>
    private let eventLoop: any EventLoop
    private let closed = SessionFlag()

    init(handler: NIOLoopBound<DeviceGateway.SessionHandler>, eventLoop: any EventLoop) {
        self.handler = handler
        self.eventLoop = eventLoop
    }

    /// Whether the connection is still open.
    var isOpen: Bool { !closed.isSet }

    func close() { closed.isSet = true }

    func post(_ event: DeviceGateway.Event) {
        let handler = handler
        eventLoop.execute { handler.value.handle(event) }
    }
}
