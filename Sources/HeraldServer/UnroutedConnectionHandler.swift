import NIOCore

/// The first handler of a drop-in connection, for the time before its TLS client hello
/// tells where it goes: a connection that says nothing for `helloTimeout`, or is still
/// silent when the server shuts down (`ChannelShouldQuiesceEvent`), is closed, so that it
/// neither holds a descriptor for long nor keeps the shutdown waiting. Once the connection
/// is routed it only passes events on.
final class UnroutedConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// How long a new connection may take to send its client hello.
    static let helloTimeout = TimeAmount.seconds(10)

    private let routed: NIOLoopBoundBox<Bool>
    private var timeout: Scheduled<Void>?

    init(routed: NIOLoopBoundBox<Bool>) {
        self.routed = routed
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let routed = routed
        timeout = context.eventLoop.scheduleTask(in: Self.helloTimeout) {
            if !routed.value { channel.close(promise: nil) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeout?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeout?.cancel()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !routed.value {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
