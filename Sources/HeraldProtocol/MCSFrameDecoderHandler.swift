public import NIOCore

/// Decodes MCS frames from a byte stream in a channel pipeline. The bytes of a frame that
/// has not arrived whole wait in the decoder; once every byte read has become a frame, the
/// handler holds no buffer, so an idle connection keeps none (issue 46).
public final class MCSFrameDecoderHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = MCSFrame

    private var decoder: MCSFrameDecoder
    /// Set once the stream could not be decoded: what follows is not read.
    private var failed = false

    /// A decoder; `expectsVersion` when the peer starts with a version byte.
    public init(expectsVersion: Bool, maximumPayloadBytes: Int = 64 * 1024) {
        decoder = MCSFrameDecoder(expectsVersion: expectsVersion, maximumPayloadBytes: maximumPayloadBytes)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        decoder.append(unwrapInboundIn(data).readableBytesView)
        do {
            while !failed, let frame = try decoder.next() {
                context.fireChannelRead(wrapInboundOut(frame))
            }
        } catch {
            failed = true
            context.fireErrorCaught(error)
        }
    }
}

@available(*, unavailable)
extension MCSFrameDecoderHandler: Sendable {}
