import NIOCore

/// Reads a plain HTTP connection's first request head, before any HTTP handler, to tell a
/// WebSocket upgrade (Mozilla's push protocol) from every other request; then hands the
/// bytes it read, untouched, to the handlers `route` added behind it, and leaves.
final class FirstRequestReader: ByteToMessageDecoder {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The longest head read before deciding: a longer one is not a WebSocket client's.
    static let maximumHeadBytes = 8_192

    private let route: (_ isWebSocket: Bool) -> EventLoopFuture<Void>
    private var decided = false

    init(route: @escaping (_ isWebSocket: Bool) -> EventLoopFuture<Void>) {
        self.route = route
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        guard !decided else { return .needMoreData }
        let view = buffer.readableBytesView
        guard let end = Self.headEnd(view) else {
            if view.count >= Self.maximumHeadBytes { decide(false, context: context) }
            return .needMoreData
        }
        decide(Self.asksForWebSocket(view.prefix(end - view.startIndex)), context: context)
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

    /// The index just past the head's blank line, if the head is complete.
    static func headEnd(_ bytes: ByteBufferView) -> ByteBufferView.Index? {
        let crlfcrlf: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4 else { return nil }
        var index = bytes.startIndex
        while index + 4 <= bytes.endIndex {
            if bytes[index] == 13, bytes[index..<index + 4].elementsEqual(crlfcrlf) { return index + 4 }
            index += 1
        }
        return nil
    }

    /// Whether a request head is a GET that asks to upgrade to a WebSocket (RFC 6455 §4.1).
    static func asksForWebSocket(_ head: some Collection<UInt8>) -> Bool {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        guard text.hasPrefix("get ") else { return false }
        return text.split(separator: "\r\n").dropFirst().contains { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            return parts.count == 2 && parts[0].trimmingSpaces == "upgrade"
                && parts[1].split(separator: ",").contains { $0.trimmingSpaces == "websocket" }
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
