public import NIOCore
import NIOHTTP1
public import NIOSSL
import NIOWebSocket

extension DeviceGateway {
    /// The largest WebSocket frame a client of Mozilla's push protocol may send: its
    /// messages are small (an `ack` of 100 updates is about 10 kB).
    static let maximumMozillaPushFrameBytes = 16_384

    /// The receive buffers of long-lived connections: from 256 bytes, growing for larger reads.
    public static var receiveBuffers: AdaptiveRecvByteBufferAllocator { TLSListener.receiveBuffers }

    /// Serves a connection whose first request asks for a WebSocket (Mozilla's push protocol,
    /// Firefox's and Sunup's): HTTP/1.1 until the upgrade (TLS first when `tls` is given),
    /// then `MozillaPushHandler` in front of the session handler every device connection
    /// has. Endpoints are issued under `endpointBase`, or the service's own when nil.
    public func adoptMozillaPush(
        _ channel: any Channel, service: MozillaPushService, tls: NIOSSLContext? = nil, endpointBase: String? = nil
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        // An idle connection keeps its last receive buffer: as small as the gateway's own.
        try channel.syncOptions?.setOption(.recvAllocator, value: Self.receiveBuffers)
        if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
        let gateway = self
        let base = endpointBase ?? service.endpointBase
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: Self.maximumMozillaPushFrameBytes, automaticErrorHandling: false,
            shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        MozillaPushHandler(gateway: gateway, service: service, endpointBase: base))
                    try channel.pipeline.syncOperations.addHandler(SessionHandler(gateway: gateway))
                }
            })
        try pipeline.configureHTTPServerPipeline(
            withServerUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    // Upgraded: what follows are WebSocket frames, for the handlers just added.
                    context.pipeline.removeHandler(name: UpgradeRequiredHandler.name, promise: nil)
                }
            ))
        try pipeline.addHandler(UpgradeRequiredHandler(), name: UpgradeRequiredHandler.name)
        metrics.increment("herald_mozilla_push_connections_total")
    }
}
