import NIOCore
import NIOHTTP2
import NIOTLS

/// Raises the number of concurrent streams a drop-in HTTP/2 connection may open from the
/// HTTP/2 library's 100 to `maximumConcurrentStreams`, so that an SDK's bulk send (the
/// Admin SDKs' `send_each` of 500 messages over one connection) runs at once.
///
/// Placed right after the TLS handler: once TLS has picked `h2`, and the connection's
/// HTTP/2 handlers are in place, it sends a SETTINGS frame through them, which the HTTP/2
/// handler applies when the client acknowledges it, and then leaves the pipeline.
final class HTTP2StreamAllowance: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// What drop-in mode allows: ten times FCM's batch of 500.
    static let maximumConcurrentStreams = 5_000

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            let channel = context.channel
            if negotiated == "h2" {
                // After this event: the HTTP/2 handlers are added while it is handled.
                context.eventLoop.execute {
                    let settings = HTTP2Frame(
                        streamID: .rootStream,
                        payload: .settings(
                            .settings([
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: Self.maximumConcurrentStreams)
                            ])))
                    channel.writeAndFlush(settings, promise: nil)
                }
            }
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
