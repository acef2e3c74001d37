public import HeraldProtocol
public import NIOCore
public import NIOPosix
public import NIOSSL

/// Opens a device-side MCS connection: TCP, TLS when given a context, and the frame
/// codec (the version byte goes before the first frame each way).
public enum MCSClientChannel {
    /// A TLS context trusting a CA file, or the system's roots when the path is nil.
    public static func tlsContext(trusting caPath: String?) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caPath { configuration.trustRoots = .file(caPath) }
        return try NIOSSLContext(configuration: configuration)
    }

    /// Connects to a gateway; the server name checked is `host`, or its IP address when `host` is one.
    public static func connect(
        host: String, port: Int, tls: NIOSSLContext?, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> NIOAsyncChannel<MCSFrame, MCSFrame> {
        let hostname = host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : host
        return try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try addHandlers(to: channel, tls: tls, serverHostname: hostname)
                    return try NIOAsyncChannel<MCSFrame, MCSFrame>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Adds TLS (when given) and the MCS frame codec to a client channel's pipeline.
    public static func addHandlers(to channel: any Channel, tls: NIOSSLContext?, serverHostname: String?) throws {
        if let tls {
            try channel.pipeline.syncOperations.addHandler(
                NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
        }
        try channel.pipeline.syncOperations.addHandler(MCSFrameDecoderHandler(expectsVersion: true))
        try channel.pipeline.syncOperations.addHandler(MCSFrameEncoderHandler(sendsVersion: true))
    }
}
