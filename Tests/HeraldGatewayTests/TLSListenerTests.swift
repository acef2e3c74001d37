import Glibc
import HeraldGateway
import NIOCore
import NIOPosix
import Testing

/// What the listener sets on the connections it accepts. `TCP_NODELAY`'s number at the
/// socket level is `SO_DEBUG`, which needs `CAP_NET_ADMIN`: the gateway set that, so run as
/// a user of its own (the systemd unit, the container) it closed every device connection
/// as it came. The test fails on a listener that sets `SO_DEBUG`.
@Suite struct TLSListenerTests {
    @Test func anAcceptedConnectionHasNagleOffAndNoOptionThatNeedsAPrivilege() async throws {
        let seen = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: SocketOptions.self)
        let listener = try await TLSListener.bind(host: "127.0.0.1", port: 0, tls: nil, backlog: 8) { pipeline in
            try pipeline.addHandler(SocketOptionReader(seen: seen))
        }
        let port = try #require(listener.localAddress?.port)
        let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).get()
        let options = try await seen.futureResult.get()
        #expect(options.noDelay != 0)
        #expect(options.debug == 0)
        try await client.close()
        try await listener.close()
    }

    /// The accepted connection's `TCP_NODELAY` and `SO_DEBUG`.
    struct SocketOptions: Sendable {
        var noDelay: Int
        var debug: Int
    }

    /// Reads the options of the connection it is added to.
    final class SocketOptionReader: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let seen: EventLoopPromise<SocketOptions>

        init(seen: EventLoopPromise<SocketOptions>) { self.seen = seen }

        func handlerAdded(context: ChannelHandlerContext) {
            guard let options = context.channel.syncOptions else {
                return seen.fail(ChannelError.operationUnsupported)
            }
            seen.completeWith(
                Result {
                    SocketOptions(
                        noDelay: try options.getOption(.tcpOption(.tcp_nodelay)),
                        debug: try options.getOption(.socketOption(.init(rawValue: SO_DEBUG))))
                })
        }
    }
}
