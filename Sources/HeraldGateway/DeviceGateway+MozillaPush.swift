public import NIOCore
public import NIOSSL

extension DeviceGateway {
    /// The largest WebSocket frame a client of Mozilla's push protocol may send: its
    /// messages are small (an `ack` of 100 updates is about 10 kB).
    static let maximumMozillaPushFrameBytes = 16_384

    /// The receive buffers of long-lived connections: from 256 bytes, growing for larger reads.
    public static var receiveBuffers: AdaptiveRecvByteBufferAllocator { TLSListener.receiveBuffers }

    /// Serves a connection whose first request asks for a WebSocket (Mozilla's push protocol,
    /// Firefox's and Sunup's): `MozillaPushHandler` answers its opening handshake and
    /// its frames (TLS first when `tls` is given), in front of the session handler every
    /// device connection has. Endpoints are issued under `endpointBase`, or the service's own when nil.
    public func adoptMozillaPush(
        _ channel: any Channel, service: MozillaPushService, tls: NIOSSLContext? = nil, endpointBase: String? = nil
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        // An idle connection keeps its last receive buffer: as small as the gateway's own.
        try channel.syncOptions?.setOption(.recvAllocator, value: Self.receiveBuffers)
        if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
        try pipeline.addHandler(
            MozillaPushHandler(gateway: self, service: service, endpointBase: endpointBase ?? service.endpointBase))
        try pipeline.addHandler(SessionHandler(gateway: self))
        metrics.increment("herald_mozilla_push_connections_total")
    }
}
