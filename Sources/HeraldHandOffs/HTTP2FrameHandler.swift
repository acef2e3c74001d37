import NIOCore
import NIOHPACK
import NIOHTTP2

/// The last handler of an HTTP/2 connection to another push service (APNs, FCM), after
/// `NIOHTTP2Handler` with no stream multiplexer: it writes each batch of requests as HEADERS
/// and DATA frames with one flush, and completes each request's promise from its answer's
/// frames. It runs on the connection's event loop; `HTTP2Streams` keeps the streams.
final class HTTP2FrameHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = Batch
    typealias OutboundOut = HTTP2Frame

    /// Requests written together, each with the promise of its answer.
    struct Batch {
        var requests: [(headers: HPACKHeaders, body: ByteBuffer, promise: EventLoopPromise<HTTP2Answer>)]
    }

    struct StreamFailed: Error {}

    private var streams = HTTP2Streams<EventLoopPromise<HTTP2Answer>>()
    private var isClosed = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let batch = unwrapOutboundIn(data)
        for request in batch.requests {
            guard !isClosed, !streams.isExhausted else {
                request.promise.fail(StreamFailed())
                continue
            }
            let stream = streams.start(request.promise)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: request.headers)))),
                promise: nil)
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(
                        streamID: stream, payload: .data(.init(data: .byteBuffer(request.body), endStream: true)))),
                promise: nil)
        }
        context.flush()
        promise?.succeed(())
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let finished: (EventLoopPromise<HTTP2Answer>, HTTP2Streams<EventLoopPromise<HTTP2Answer>>.Outcome)?
        switch frame.payload {
        case .headers(let headers):
            finished = streams.headers(
                frame.streamID, status: headers.headers.first(name: ":status").flatMap { Int($0) },
                retryAfter: headers.headers.first(name: "retry-after"), endStream: headers.endStream)
        case .data(let data):
            guard case .byteBuffer(let buffer) = data.data else { return }
            consumed(buffer.readableBytes + (data.paddingBytes ?? 0), context: context)
            finished = streams.data(frame.streamID, Array(buffer.readableBytesView), endStream: data.endStream)
        case .rstStream:
            finished = streams.reset(frame.streamID)
        case .goAway(let lastStreamID, _, _):
            isClosed = true
            for promise in streams.abandon(after: lastStreamID) { promise.fail(StreamFailed()) }
            finished = nil
        default:
            finished = nil
        }
        if let (promise, outcome) = finished {
            switch outcome {
            case .answered(let answer): promise.succeed(answer)
            case .failed: promise.fail(StreamFailed())
            }
        }
    }

    /// Gives the peer back the connection's flow-control window for answers' bodies read:
    /// with no stream multiplexer nothing else does, and a peer whose answers have bodies
    /// (FCM's name every message) would stop once 64 KiB of them were unacknowledged.
    private func consumed(_ bytes: Int, context: ChannelHandlerContext) {
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= Self.windowUpdateThreshold else { return }
        context.writeAndFlush(
            wrapOutboundOut(
                HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledgedBytes))),
            promise: nil)
        unacknowledgedBytes = 0
    }

    /// Bytes of answers' bodies read and not yet given back to the peer's window.
    private var unacknowledgedBytes = 0
    /// Half the initial window of 65,535 bytes.
    static let windowUpdateThreshold = 32_768

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        for promise in streams.abandon() { promise.fail(StreamFailed()) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
