import HeraldClient
public import HeraldProtocol
public import NIOCore
public import NIOPosix
public import NIOSSL
import SwiftProtobuf

/// A device for benchmarks: a channel handler that logs in, answers heartbeats, and
/// reports and acknowledges every message, with no task per connection, so that one
/// process can hold many thousands.
public enum BenchDevice {
    /// Opens a connection and logs in; the future completes once the login succeeded.
    public static func connect(
        host: String, port: Int, localAddress: String?, tls: NIOSSLContext?, androidID: UInt64, securityToken: UInt64,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onMessage: @escaping @Sendable (McsProto_DataMessageStanza, ContinuousClock.Instant) -> Void = { _, _ in }
    ) async throws -> any Channel {
        var bootstrap = ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(30))
        if let localAddress {
            bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: localAddress, port: 0))
        }
        let login = MCSFrame.login(androidID: androidID, securityToken: securityToken, clientID: "herald-bench")
        let channel = try await bootstrap.channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try MCSClientChannel.addHandlers(to: channel, tls: tls, serverHostname: nil)
                let handler = BenchDeviceHandler(
                    login: login, loggedIn: channel.eventLoop.makePromise(), onMessage: onMessage)
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }.connect(host: host, port: port).get()
        let handler = try await channel.pipeline.handler(type: BenchDeviceHandler.self).get()
        try await handler.loggedIn.futureResult.get()
        return channel
    }
}

final class BenchDeviceHandler: ChannelInboundHandler {
    typealias InboundIn = MCSFrame
    typealias OutboundOut = MCSFrame

    struct LoginRefused: Error {}

    let login: MCSFrame
    let loggedIn: EventLoopPromise<Void>
    let onMessage: @Sendable (McsProto_DataMessageStanza, ContinuousClock.Instant) -> Void
    private var loginSettled = false

    init(
        login: MCSFrame, loggedIn: EventLoopPromise<Void>,
        onMessage: @escaping @Sendable (McsProto_DataMessageStanza, ContinuousClock.Instant) -> Void
    ) {
        self.login = login
        self.loggedIn = loggedIn
        self.onMessage = onMessage
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(login), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.tag {
        case .loginResponse:
            if let response = try? frame.decode(as: McsProto_LoginResponse.self), !response.hasError {
                settleLogin(nil)
            } else {
                settleLogin(LoginRefused())
                context.close(promise: nil)
            }
        case .heartbeatPing:
            context.writeAndFlush(wrapOutboundOut(MCSFrame(tag: .heartbeatAck, payload: [])), promise: nil)
        case .dataMessageStanza:
            let now = ContinuousClock.now
            guard let stanza = try? frame.decode(as: McsProto_DataMessageStanza.self) else { return }
            onMessage(stanza, now)
            context.writeAndFlush(wrapOutboundOut(MCSFrame.selectiveAck([stanza.persistentID])), promise: nil)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settleLogin(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settleLogin(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    private func settleLogin(_ error: (any Error)?) {
        guard !loginSettled else { return }
        loginSettled = true
        if let error { loggedIn.fail(error) } else { loggedIn.succeed() }
    }
}

@available(*, unavailable)
extension BenchDeviceHandler: Sendable {}
