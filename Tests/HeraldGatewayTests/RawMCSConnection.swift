import HeraldClient
import HeraldCore
import HeraldProtocol
import NIOCore
import NIOPosix
import NIOSSL

/// A bare MCS connection for tests: frames in and out, no client logic, so that tests
/// can misbehave (never acknowledge, send garbage, log in with a wrong token).
final class RawMCSConnection {
    private var inbound: NIOAsyncChannelInboundStream<MCSFrame>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var decoderSentVersion = false
    private var wroteVersion = false

    private init(inbound: NIOAsyncChannelInboundStream<MCSFrame>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
    }

    static func with<T>(
        port: Int, caPath: String?, _ body: (RawMCSConnection) async throws -> T
    ) async throws -> T {
        let context = try caPath.map { try MCSClientChannel.tlsContext(trusting: $0) }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: context, serverHostname: nil))
                    }
                    try channel.pipeline.syncOperations.addHandler(MCSFrameDecoderHandler(expectsVersion: true))
                    return try NIOAsyncChannel<MCSFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(RawMCSConnection(inbound: inbound, outbound: outbound))
        }
    }

    /// Writes a frame (the version byte goes before the first one).
    func send(_ frame: MCSFrame) async throws {
        try await outbound.write(ByteBuffer(bytes: frame.encoded(withVersion: !wroteVersion)))
        wroteVersion = true
    }

    /// Writes raw bytes.
    func sendBytes(_ bytes: [UInt8]) async throws {
        try await outbound.write(ByteBuffer(bytes: bytes))
        wroteVersion = true
    }

    /// The next frame, nil when the connection ended.
    func receive() async throws -> MCSFrame? {
        try await inbound.next()
    }

    /// Logs in and answers the LoginResponse.
    func login(_ device: Device, securityToken: UInt64? = nil, received: [String] = []) async throws
        -> McsProto_LoginResponse?
    {
        try await send(
            MCSFrame.login(
                androidID: device.androidID, securityToken: securityToken ?? device.securityToken,
                receivedPersistentIDs: received, clientID: "raw-test"))
        guard let frame = try await receive(), frame.tag == .loginResponse else { return nil }
        return try frame.decode(as: McsProto_LoginResponse.self)
    }

    /// The next data message, skipping heartbeats.
    func receiveMessage() async throws -> McsProto_DataMessageStanza? {
        while let frame = try await receive() {
            if frame.tag == .dataMessageStanza { return try frame.decode(as: McsProto_DataMessageStanza.self) }
        }
        return nil
    }

    /// Acknowledges persistent ids with a selective ack.
    func acknowledge(_ ids: [String]) async throws {
        try await send(MCSFrame.selectiveAck(ids))
    }
}
