import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import HeraldHandOffs

/// The frame handler gives the peer back the connection's window for the answers' bodies it
/// reads: without it a peer whose answers have bodies (FCM's) stops after 64 KiB of them.
@Suite struct HTTP2FrameHandlerTests {
    @Test func answersBodiesAreGivenBackToTheConnectionsWindow() throws {
        let channel = EmbeddedChannel(handler: HTTP2FrameHandler())
        let loop = channel.embeddedEventLoop
        var promises: [EventLoopPromise<HTTP2Answer>] = []
        var batch = HTTP2FrameHandler.Batch(requests: [])
        for _ in 0..<600 {
            let promise = loop.makePromise(of: HTTP2Answer.self)
            promises.append(promise)
            batch.requests.append((HPACKHeaders([(":method", "POST")]), ByteBuffer(string: "{}"), promise))
        }
        try channel.writeOutbound(batch)
        while try channel.readOutbound(as: HTTP2Frame.self) != nil {}
        let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: 100)
        var given = 0
        for index in 0..<600 {
            let stream = HTTP2StreamID(1 + 2 * index)
            try channel.writeInbound(
                HTTP2Frame(streamID: stream, payload: .headers(.init(headers: HPACKHeaders([(":status", "200")])))))
            try channel.writeInbound(
                HTTP2Frame(streamID: stream, payload: .data(.init(data: .byteBuffer(body), endStream: true))))
            while let frame = try channel.readOutbound(as: HTTP2Frame.self) {
                if case .windowUpdate(let increment) = frame.payload, frame.streamID == .rootStream {
                    given += increment
                }
            }
        }
        // 60,000 bytes read: all but the last unreturned part is given back, well before 64 KiB.
        #expect(given >= 60_000 - HTTP2FrameHandler.windowUpdateThreshold && given <= 60_000)
        #expect(try promises[599].futureResult.wait().status == 200)
        _ = try channel.finish()
    }
}
