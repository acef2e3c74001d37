public import NIOCore

extension MCSFrame {
    /// The most bytes a frame adds to its payload: the version, the tag and a varint32 length.
    public static let maximumOverhead = 7

    /// Writes the frame's wire bytes into `buffer`: tag, length as a protobuf varint,
    /// payload; the version byte first when asked.
    public func encode(withVersion: Bool, into buffer: inout ByteBuffer) {
        if withVersion { buffer.writeInteger(Self.version) }
        buffer.writeInteger(tag.rawValue)
        var remaining = UInt32(payload.count)
        while remaining >= 0x80 {
            buffer.writeInteger(UInt8(remaining & 0x7F) | 0x80)
            remaining >>= 7
        }
        buffer.writeInteger(UInt8(remaining))
        buffer.writeBytes(payload)
    }

    /// The frame's wire bytes, as `encode(withVersion:into:)` writes them.
    public func encoded(withVersion: Bool) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(payload.count + Self.maximumOverhead)
        encode(withVersion: withVersion, into: &buffer)
        return Array(buffer.readableBytesView)
    }
}
