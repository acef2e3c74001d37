public import NIOCore
import NIOPosix
public import NIOSSL

/// A TCP listener for long-lived connections: TLS from the first byte when `tls` is set,
/// no Nagle delay, connections bounded by `admission` until they authenticate, and
/// `handlers` adding the protocol's own handlers to each connection.
public enum TLSListener {
    /// Receive buffers from 256 bytes, growing up to 64 KiB for larger reads.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65536)

    public static func bind(
        host: String, port: Int, tls: NIOSSLContext?, backlog: Int32, admission: ConnectionAdmission? = nil,
        handlers: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: backlog)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // A connection keeps its receive buffer between reads; NIO's default starts at
            // 2 KiB. Frames from devices are mostly a few hundred bytes, and the buffer grows
            // for larger reads, so starting small saves most of it on every idle connection.
            .childChannelOption(.recvAllocator, value: Self.receiveBuffers)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let admission { try channel.pipeline.syncOperations.addHandler(admission.makeHandler()) }
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try handlers(channel.pipeline.syncOperations)
                }
            }
            .bind(host: host, port: port).get()
    }
}
