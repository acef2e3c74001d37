import HeraldGateway
import NIOCore

/// Reads a plain HTTP connection's first request head, before any HTTP handler, to tell a
/// WebSocket upgrade (Mozilla's push protocol) from every other request; then hands the
/// bytes it read, untouched, to the handlers `route` added behind it, and leaves.
final class FirstRequestReader: ByteToMessageDecoder {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let route: (_ isWebSocket: Bool) -> EventLoopFuture<Void>
    private var decided = false

    init(route: @escaping (_ isWebSocket: Bool) -> EventLoopFuture<Void>) {
        self.route = route
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        guard !decided else { return .needMoreData }
        let view = buffer.readableBytesView
        guard let end = WebSocketHandshake.headEnd(view) else {
            // A longer head is not a WebSocket client's.
            if view.count >= WebSocketHandshake.maximumHeadBytes { decide(false, context: context) }
            return .needMoreData
        }
        decide(WebSocketHandshake.asksForWebSocket(view.prefix(end)), context: context)
        return .needMoreData
    }

    /// Called as the reader leaves: what it read goes on to the handlers behind it.
    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) -> DecodingState {
        if buffer.readableBytes > 0, let bytes = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(NIOAny(bytes))
            // Outside a read from the socket: handlers that gather a read's messages until it
            // completes (Hummingbird's) are told it did.
            context.fireChannelReadComplete()
        }
        return .needMoreData
    }

    private func decide(_ isWebSocket: Bool, context: ChannelHandlerContext) {
        decided = true
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        route(isWebSocket).hop(to: context.eventLoop).whenSuccess {
            // Removing the decoder passes the bytes it holds to the next handler.
            bound.value.pipeline.syncOperations.removeHandler(context: bound.value, promise: nil)
        }
    }
}
