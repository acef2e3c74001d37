import NIOCore
import NIOHTTP1

/// Answers a request on a connection kept for WebSocket clients that did not ask for a
/// WebSocket (426 Upgrade Required), and closes it.
final class UpgradeRequiredHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Its name in the pipeline, by which the upgrade removes it.
    static let name = "herald-upgrade-required"

    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head = unwrapInboundIn(data), !answered else { return }
        answered = true
        let text = "This address takes WebSocket connections only.\n"
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/plain")
        headers.add(name: "content-length", value: String(text.utf8.count))
        headers.add(name: "upgrade", value: "websocket")
        headers.add(name: "connection", value: "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .upgradeRequired, headers: headers))),
            promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
