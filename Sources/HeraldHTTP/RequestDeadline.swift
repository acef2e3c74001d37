public import NIOCore
public import NIOHTTPTypes

/// Closes an HTTP connection whose next request has not fully arrived in time: the
/// head must be complete within `headTimeout` of the connection opening or the previous
/// answer, and the body within `bodyTimeout` of the head. A client trickling a
/// header or a body a byte at a time (slowloris) holds a connection for those seconds at
/// most, instead of for as long as it likes.
public final class RequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private var deadline: Scheduled<Void>?

    public init(headTimeout: TimeAmount, bodyTimeout: TimeAmount) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        arm(headTimeout, context: context)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(bodyTimeout, context: context)
        case .body: break
        case .end:
            // The request is in; the response may take as long as it takes.
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // The answer is out: the next request's head is due within the head timeout.
        if case .end = unwrapOutboundIn(data) { arm(headTimeout, context: context) }
        context.write(data, promise: promise)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    private func arm(_ timeout: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            loopBound.value.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension RequestDeadline: Sendable {}
