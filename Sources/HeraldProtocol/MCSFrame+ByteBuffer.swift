public import NIOCore

extension MCSFrame {
    /// How many bytes `encode(withVersion:into:)` writes.
    public func encodedCount(withVersion: Bool) -> Int {
        var lengthBytes = 1
        var remaining = UInt32(payload.count) >> 7
        while remaining > 0 {
            lengthBytes += 1
            remaining >>= 7
        }
        return (withVersion ? 1 : 0) + 1 + lengthBytes + payload.count
    }

    /// Writes the frame's wire bytes (as `encoded(withVersion:)` makes them) into `buffer`.
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
}
