import NIOCore
import Testing

@testable import HeraldGateway

/// WebSocket frames as Mozilla's push protocol connections read a client's and write their own.
@Suite struct WebSocketFramesTests {
    /// A client's frame: masked, as RFC 6455 §5.3 requires.
    func clientFrame(_ first: UInt8, _ payload: [UInt8], masked: Bool = true) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(first)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            buffer.writeInteger(maskBit | UInt8(payload.count))
        } else {
            buffer.writeInteger(maskBit | 126)
            buffer.writeInteger(UInt16(payload.count))
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        if masked { buffer.writeBytes(mask) }
        buffer.writeBytes(payload.enumerated().map { masked ? $0.element ^ mask[$0.offset % 4] : $0.element })
        return buffer
    }

    func read(_ buffer: inout ByteBuffer) throws(WebSocketFrames.Failure) -> WebSocketFrames.Frame? {
        try WebSocketFrames.read(&buffer, maximumPayload: 1_000)
    }

    @Test func aMaskedTextFrameIsReadUnmasked() throws {
        // RFC 6455 §5.7's masked "Hello".
        var buffer = ByteBuffer(bytes: [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(try read(&buffer) == WebSocketFrames.Frame(fin: true, opcode: .text, payload: Array("Hello".utf8)))
        #expect(buffer.readableBytes == 0)
    }

    @Test func anIncompleteFrameReadsNothing() throws {
        let whole = clientFrame(0x81, Array(repeating: 65, count: 300))
        for cut in [1, 3, 7, 299] {
            var buffer = whole.getSlice(at: 0, length: cut)!
            #expect(try read(&buffer) == nil)
            #expect(buffer.readableBytes == cut)
        }
        var buffer = whole
        var ping = clientFrame(0x89, [1, 2])
        buffer.writeBuffer(&ping)
        #expect(try read(&buffer)?.payload.count == 300)
        #expect(try read(&buffer) == WebSocketFrames.Frame(fin: true, opcode: .ping, payload: [1, 2]))
    }

    @Test func badFramesAreRefusedWithTheirCloseCode() {
        let refusals: [(ByteBuffer, WebSocketFrames.Failure)] = [
            (clientFrame(0x81, [1], masked: false), .malformed),  // unmasked
            (clientFrame(0xC1, [1]), .malformed),  // a reserved bit
            (clientFrame(0x83, [1]), .malformed),  // a reserved opcode
            (clientFrame(0x09, [1]), .malformed),  // a fragmented ping
            (clientFrame(0x89, Array(repeating: 0, count: 126)), .malformed),  // a long ping
            (clientFrame(0x81, Array(repeating: 0, count: 1_001)), .tooLarge),
            (ByteBuffer(bytes: [0x81, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0]), .tooLarge),  // told before it arrives
        ]
        for (bytes, failure) in refusals {
            var buffer = bytes
            #expect(throws: failure) { try read(&buffer) }
        }
        #expect(WebSocketFrames.Failure.malformed.closeCode == 1002)
        #expect(WebSocketFrames.Failure.tooLarge.closeCode == 1009)
    }

    @Test func aServerFrameIsUnmaskedWithItsLength() {
        for (count, header) in [
            (5, [0x81, 5]), (126, [0x81, 126, 0, 126]), (70_000, [0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]),
        ] {
            var buffer = ByteBuffer()
            WebSocketFrames.write(.text, Array(repeating: 120, count: count), to: &buffer)
            #expect(buffer.readBytes(length: header.count) == header.map { UInt8($0) })
            #expect(buffer.readableBytes == count)
        }
    }
}
