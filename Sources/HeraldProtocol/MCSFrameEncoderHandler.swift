public import NIOCore

/// Encodes MCS frames onto a byte stream, with the version byte before the first one. Each
/// frame gets a buffer of its own (its size at most), so that none stays with an idle connection.
public final class MCSFrameEncoderHandler: ChannelOutboundHandler {
    public typealias OutboundIn = MCSFrame
    public typealias OutboundOut = ByteBuffer

    private var needsVersion: Bool

    /// An encoder; `sendsVersion` to put the version byte before the first frame.
    public init(sendsVersion: Bool) {
        needsVersion = sendsVersion
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        var buffer = context.channel.allocator.buffer(capacity: frame.payload.count + MCSFrame.maximumOverhead)
        frame.encode(withVersion: needsVersion, into: &buffer)
        needsVersion = false
        context.write(wrapOutboundOut(buffer), promise: promise)
    }
}

@available(*, unavailable)
extension MCSFrameEncoderHandler: Sendable {}
