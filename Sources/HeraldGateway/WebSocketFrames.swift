public import NIOCore

/// WebSocket frames (RFC 6455 §5) as a server reads a client's and writes its own: pure
/// functions on the connection's bytes, so that a connection needs no decoder or encoder
/// handler of its own, and an idle one holds no buffer.
public enum WebSocketFrames {
    /// The opcodes of RFC 6455 §11.8.
    public enum Opcode: UInt8, Sendable {
        case continuation = 0
        case text = 1
        case binary = 2
        case close = 8
        case ping = 9
        case pong = 10
    }

    /// A whole frame from a client, its payload unmasked.
    public struct Frame: Equatable, Sendable {
        public let fin: Bool
        public let opcode: Opcode
        public let payload: [UInt8]
    }

    /// Why a client's bytes are not a frame: the close code it is answered with.
    public enum Failure: Error, Equatable, Sendable {
        /// Reserved bits or opcodes, an unmasked frame, a long or fragmented control frame: 1002.
        case malformed
        /// A payload past the limit: 1009.
        case tooLarge

        public var closeCode: UInt16 { self == .malformed ? 1002 : 1009 }
    }

    /// Reads the next whole frame off `buffer`; nil, with nothing read, while it is incomplete.
    /// A payload's length is checked against `maximumPayload` before it arrives.
    public static func read(_ buffer: inout ByteBuffer, maximumPayload: Int) throws(Failure) -> Frame? {
        let start = buffer.readerIndex
        guard let first = buffer.getInteger(at: start, as: UInt8.self),
            let second = buffer.getInteger(at: start + 1, as: UInt8.self)
        else { return nil }
        // No extension is agreed, so no reserved bit may be set; a client masks every frame.
        guard first & 0x70 == 0, second & 0x80 != 0, let opcode = Opcode(rawValue: first & 0x0F) else {
            throw .malformed
        }
        let fin = first & 0x80 != 0
        var length = UInt64(second & 0x7F)
        var header = 2
        if length == 126 {
            guard let extended = buffer.getInteger(at: start + 2, as: UInt16.self) else { return nil }
            length = UInt64(extended)
            header = 4
        } else if length == 127 {
            guard let extended = buffer.getInteger(at: start + 2, as: UInt64.self) else { return nil }
            length = extended
            header = 10
        }
        if opcode.rawValue >= Opcode.close.rawValue, !fin || length > 125 { throw .malformed }
        guard length <= UInt64(maximumPayload) else { throw .tooLarge }
        let size = Int(length)
        guard buffer.readableBytes >= header + 4 + size,
            let mask = buffer.getBytes(at: start + header, length: 4)
        else { return nil }
        buffer.moveReaderIndex(forwardBy: header + 4)
        var payload = buffer.readBytes(length: size) ?? []
        for index in payload.indices { payload[index] ^= mask[index & 3] }
        return Frame(fin: fin, opcode: opcode, payload: payload)
    }

    /// Writes a whole, unmasked frame (a server's) to `buffer`.
    public static func write(_ opcode: Opcode, _ payload: some Collection<UInt8>, to buffer: inout ByteBuffer) {
        buffer.writeInteger(0x80 | opcode.rawValue)
        let count = payload.count
        if count < 126 {
            buffer.writeInteger(UInt8(count))
        } else if count <= Int(UInt16.max) {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(count))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(count))
        }
        buffer.writeBytes(payload)
    }
}
