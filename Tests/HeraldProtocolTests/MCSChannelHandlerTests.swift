import HeraldProtocol
import NIOCore
import NIOEmbedded
import Testing

/// The MCS frame codec as the gateway and the client put it in a channel pipeline.
@Suite struct MCSChannelHandlerTests {
    let frames = [
        MCSFrame(tag: .heartbeatPing, payload: []),
        MCSFrame(tag: .dataMessageStanza, payload: Array(repeating: 7, count: 300)),
        MCSFrame(tag: .heartbeatAck, payload: [1, 2, 3]),
    ]

    @Test func framesSplitAcrossReadsOrSharingOneArePassedOnWholeAndOnce() throws {
        let channel = EmbeddedChannel(handler: MCSFrameDecoderHandler(expectsVersion: true))
        let bytes =
            frames[0].encoded(withVersion: true) + frames[1].encoded(withVersion: false)
            + frames[2].encoded(withVersion: false)
        // The first read ends inside the second frame's payload; the second read holds the rest.
        try channel.writeInbound(ByteBuffer(bytes: bytes[0..<50]))
        try channel.writeInbound(ByteBuffer(bytes: bytes[50...]))
        var decoded: [MCSFrame] = []
        while let frame = try channel.readInbound(as: MCSFrame.self) { decoded.append(frame) }
        #expect(decoded == frames)
    }

    @Test func aStreamThatCannotBeDecodedIsReportedOnceAndNotReadFurther() throws {
        let channel = EmbeddedChannel(handler: MCSFrameDecoderHandler(expectsVersion: true))
        #expect(throws: MCSFrameDecoder.Failure.unsupportedVersion(99)) {
            try channel.writeInbound(ByteBuffer(bytes: [99]))
        }
        try channel.writeInbound(ByteBuffer(bytes: frames[0].encoded(withVersion: true)))
        #expect(try channel.readInbound(as: MCSFrame.self) == nil)
    }

    @Test func theEncoderWritesTheVersionBeforeTheFirstFrameOnlyAndTheFramesWireBytes() throws {
        let channel = EmbeddedChannel(handler: MCSFrameEncoderHandler(sendsVersion: true))
        for frame in frames { try channel.writeOutbound(frame) }
        // Version 41, then each frame's tag and its length as a varint (300 is 0xAC 0x02).
        let expected: [[UInt8]] = [
            [41, 0, 0], [8, 0xAC, 0x02] + Array(repeating: 7, count: 300), [1, 3, 1, 2, 3],
        ]
        for bytes in expected {
            let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(Array(written.readableBytesView) == bytes)
        }
        #expect(frames[1].encoded(withVersion: true) == [41] + expected[1])
    }
}
