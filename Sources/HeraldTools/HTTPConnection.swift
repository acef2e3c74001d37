public import HeraldClient
public import NIOCore
public import NIOHTTP1
public import NIOPosix

/// One keep-alive HTTP/1.1 client connection, for Herald's command-line tools and
/// benchmarks: requests go one after another on the same socket.
public final class HTTPConnection {
    private var inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    private let hostHeader: String

    /// Why a connection could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    init(
        inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>,
        outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>, hostHeader: String
    ) {
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
        self.hostHeader = hostHeader
    }

    /// Opens a connection, runs `body` with it, and closes it.
    public static func with<Result>(
        host: String, port: Int, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        _ body: (HTTPConnection) async throws -> Result
    ) async throws -> Result {
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(HTTPConnection(inbound: inbound, outbound: outbound, hostHeader: "\(host):\(port)"))
        }
    }

    /// Sends one request and reads its whole answer.
    public func request(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> HTTPResult {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: hostHeader)
        head.headers.add(name: "Content-Length", value: String(body.count))
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        try await outbound.write(contentsOf: [
            .head(head), .body(.byteBuffer(ByteBuffer(bytes: body))), .end(nil),
        ])
        var result = HTTPResult(status: 0, headers: [:], body: [])
        while let part = try await inbound.next() {
            switch part {
            case .head(let responseHead):
                result.status = Int(responseHead.status.code)
                result.headers = responseHead.headers
            case .body(let buffer):
                result.body.append(contentsOf: buffer.readableBytesView)
            case .end:
                return result
            }
        }
        throw Failure(description: "the server closed the connection")
    }
}
