public import NIOCore

/// Decodes MCS frames from a byte stream in a channel pipeline.
public final class MCSFrameDecoderHandler: ByteToMessageDecoder {
    public typealias InboundOut = MCSFrame

    private var decoder: MCSFrameDecoder

    /// A decoder; `expectsVersion` when the peer starts with a version byte.
    public init(expectsVersion: Bool, maximumPayloadBytes: Int = 64 * 1024) {
        decoder = MCSFrameDecoder(expectsVersion: expectsVersion, maximumPayloadBytes: maximumPayloadBytes)
    }

    public func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        decoder.append(buffer.readableBytesView)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        while let frame = try decoder.next() {
            context.fireChannelRead(wrapInboundOut(frame))
        }
        return .needMoreData
    }

    public func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        try decode(context: context, buffer: &buffer)
    }
}

@available(*, unavailable)
extension MCSFrameDecoderHandler: Sendable {}

/// Encodes MCS frames onto a byte stream, with the version byte before the first one.
public final class MCSFrameEncoderHandler: MessageToByteEncoder {
    public typealias OutboundIn = MCSFrame

    private var needsVersion: Bool

    /// An encoder; `sendsVersion` to put the version byte before the first frame.
    public init(sendsVersion: Bool) {
        needsVersion = sendsVersion
    }

    public func encode(data: MCSFrame, out: inout ByteBuffer) throws {
        out.writeBytes(data.encoded(withVersion: needsVersion))
        needsVersion = false
    }
}

@available(*, unavailable)
extension MCSFrameEncoderHandler: Sendable {}
