public import NIOCore
public import NIOHTTPTypes

/// Closes an HTTP connection whose next request has not fully arrived in time: the
/// head must be complete within `headTimeout` of the connection opening or the previous
/// answer, and the body within `bodyTimeout` of the head. A client trickling a
/// header or a body a byte at a time (slowloris) holds a connection for those seconds at
/// most, instead of for as long as it likes. When the node stops (`HTTPShutdown`) the
/// connection is closed at the end of the grace, whatever it is doing.
public final class RequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    /// When the connection is closed unless what is awaited has arrived; nil while an
    /// answer is being made.
    private var deadline: NIODeadline?
    /// The one timer, and when it fires. A deadline moved later does not move it: when it
    /// fires early it sets itself again for the deadline of then, so a request costs two
    /// readings of the clock rather than a timer set and cancelled twice.
    private var timer: (task: Scheduled<Void>, fires: NIODeadline)?

    private let shutdown: HTTPShutdown?
    /// The connection's place in `shutdown`.
    private var registration: UInt64?
    /// The close at the end of the shutdown's grace.
    private var cut: Scheduled<Void>?

    public init(headTimeout: TimeAmount, bodyTimeout: TimeAmount, shutdown: HTTPShutdown? = nil) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.shutdown = shutdown
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        arm(headTimeout, context: context)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        registration = shutdown?.register { deadline in
            eventLoop.execute {
                let (handler, context) = loopBound.value
                guard handler.cut == nil, handler.registration != nil else { return }
                handler.cut = eventLoop.scheduleTask(deadline: deadline) { context.close(promise: nil) }
            }
        }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(bodyTimeout, context: context)
        case .body: break
        // The request is in; the response may take as long as it takes.
        case .end: deadline = nil
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // The answer is out: the next request's head is due within the head timeout.
        if case .end = unwrapOutboundIn(data) { arm(headTimeout, context: context) }
        context.write(data, promise: promise)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    private func arm(_ timeout: TimeAmount, context: ChannelHandlerContext) {
        let deadline = context.eventLoop.now + timeout
        self.deadline = deadline
        if let timer, timer.fires <= deadline { return }
        schedule(at: deadline, context: context)
    }

    private func schedule(at time: NIODeadline, context: ChannelHandlerContext) {
        timer?.task.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = (context.eventLoop.scheduleTask(deadline: time) { loopBound.value.0.fired(loopBound.value.1) }, time)
    }

    private func fired(_ context: ChannelHandlerContext) {
        timer = nil
        guard let deadline else { return }
        if deadline <= context.eventLoop.now {
            self.deadline = nil
            context.close(promise: nil)
        } else {
            schedule(at: deadline, context: context)
        }
    }

    private func stop() {
        timer?.task.cancel()
        timer = nil
        deadline = nil
        cut?.cancel()
        cut = nil
        if let registration { shutdown?.unregister(registration) }
        registration = nil
    }
}

@available(*, unavailable)
extension RequestDeadline: Sendable {}
