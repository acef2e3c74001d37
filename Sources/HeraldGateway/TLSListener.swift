public import NIOCore
import NIOPosix
public import NIOSSL

/// A TCP listener for long-lived connections: TLS from the first byte when `tls` is set,
/// no Nagle delay, and `handlers` adding the protocol's own handlers to each connection.
public enum TLSListener {
    public static func bind(
        host: String, port: Int, tls: NIOSSLContext?, backlog: Int32,
        handlers: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: backlog)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try handlers(channel.pipeline.syncOperations)
                }
            }
            .bind(host: host, port: port).get()
    }
}
