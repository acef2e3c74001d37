public import HeraldCore
public import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A client of Mozilla's push protocol for benchmarks (as Firefox speaks it, WIRE.md §8b):
/// one WebSocket to Herald's HTTP port, `hello`, then requests answered in order and
/// notifications handed to `onNotification`, which the client acknowledges itself.
public final class MozillaPushBenchClient: Sendable {
    public let channel: any Channel
    /// The `uaid` the server answered.
    public let uaid: String
    private let handler: NIOLoopBound<Handler>

    private init(channel: any Channel, uaid: String, handler: NIOLoopBound<Handler>) {
        self.channel = channel
        self.uaid = uaid
        self.handler = handler
    }

    /// Connects and says `hello` (with `uaid` when given); returns once the server answered it.
    public static func connect(
        host: String, port: Int, uaid: String? = nil,
        onNotification: @escaping @Sendable (_ data: [UInt8]) -> Void = { _ in }
    ) async throws -> MozillaPushBenchClient {
        let hello = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: JSONValue.self)
        let channel = try await ClientBootstrap(group: hello.futureResult.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let requester = UpgradeRequester(host: "\(host):\(port)")
                    let upgrader = NIOWebSocketClientUpgrader(
                        requestKey: Base64URL.encodeStandard(SecureRandom.bytes(16)),
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    Handler(hello: hello, uaid: uaid, onNotification: onNotification))
                            }
                        })
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        withClientUpgrade: (
                            upgraders: [upgrader],
                            // The requester stays: it only passes frames on from then on.
                            completionHandler: { _ in }
                        ))
                    try channel.pipeline.syncOperations.addHandler(requester)
                }
            }
            .connect(host: host, port: port).get()
        let reply = try await hello.futureResult.get()
        guard let uaid = reply["uaid"]?.stringValue else { throw Failure(description: "no uaid in \(reply)") }
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: Handler.self), eventLoop: channel.eventLoop)
        }.get()
        return MozillaPushBenchClient(channel: channel, uaid: uaid, handler: handler)
    }

    /// Registers a channel restricted to `key`; answers its endpoint.
    public func register(key: String) async throws -> String {
        let channelID = Self.channelID()
        let text = JSONValue.object([
            ("messageType", .string("register")), ("channelID", .string(channelID)), ("key", .string(key)),
        ]).rendered
        let reply = try await channel.eventLoop.flatSubmit { [handler] in handler.value.request(text) }.get()
        guard reply["status"]?.numberValue == 200, let endpoint = reply["pushEndpoint"]?.stringValue else {
            throw Failure(description: "register: \(reply.rendered)")
        }
        return endpoint
    }

    public func close() { channel.close(promise: nil) }

    /// A random channel id, as Firefox makes them: a version 4 UUID, lower-case with dashes.
    static func channelID() -> String {
        var bytes = SecureRandom.bytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex.dropFirst(range.lowerBound).prefix(range.count))
        }
        return parts.joined(separator: "-")
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends the upgrade request once connected.
    final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        let host: String

        init(host: String) { self.host = host }

        func channelActive(context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: host)
            headers.add(name: "Content-Length", value: "0")
            context.write(
                wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: headers))),
                promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }
    }

    /// The protocol once upgraded: `hello`, requests answered in order, notifications acked.
    final class Handler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        private var hello: EventLoopPromise<JSONValue>?
        private let uaid: String?
        private let onNotification: @Sendable ([UInt8]) -> Void
        private var pending: [EventLoopPromise<JSONValue>] = []
        private var context: ChannelHandlerContext?

        init(hello: EventLoopPromise<JSONValue>, uaid: String?, onNotification: @escaping @Sendable ([UInt8]) -> Void) {
            self.hello = hello
            self.uaid = uaid
            self.onNotification = onNotification
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
            var members: [(key: String, value: JSONValue)] = [
                ("messageType", .string("hello")), ("use_webpush", .bool(true)),
            ]
            if let uaid { members.append(("uaid", .string(uaid))) }
            send(JSONValue.object(members).rendered, context: context)
        }

        func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

        func channelInactive(context: ChannelHandlerContext) {
            hello?.fail(ChannelError.ioOnClosedChannel)
            hello = nil
            for promise in pending { promise.fail(ChannelError.ioOnClosedChannel) }
            pending = []
            context.fireChannelInactive()
        }

        func request(_ text: String) -> EventLoopFuture<JSONValue> {
            guard let context else {
                return MultiThreadedEventLoopGroup.singleton.any().makeFailedFuture(ChannelError.ioOnClosedChannel)
            }
            let promise = context.eventLoop.makePromise(of: JSONValue.self)
            pending.append(promise)
            send(text, context: context)
            return promise.futureResult
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            guard frame.opcode == .text else {
                if frame.opcode == .ping {
                    var payload = frame.unmaskedData
                    let pong = WebSocketFrame(
                        fin: true, opcode: .pong, maskKey: .random(),
                        data: payload.readSlice(length: payload.readableBytes)!)
                    context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
                }
                return
            }
            var bytes = frame.unmaskedData
            guard let message = try? JSONParser.parse(bytes.readBytes(length: bytes.readableBytes) ?? []) else {
                return
            }
            if let hello {
                self.hello = nil
                hello.succeed(message)
            } else if message["messageType"] == .string("notification") {
                onNotification(message["data"]?.stringValue.flatMap { Base64URL.decode($0) } ?? [])
                let ack = JSONValue.object([
                    ("messageType", .string("ack")),
                    (
                        "updates",
                        .array([
                            .object([
                                ("channelID", message["channelID"] ?? .null), ("version", message["version"] ?? .null),
                            ])
                        ])
                    ),
                ])
                send(ack.rendered, context: context)
            } else if !pending.isEmpty {
                pending.removeFirst().succeed(message)
            }
        }

        private func send(_ text: String, context: ChannelHandlerContext) {
            let buffer = context.channel.allocator.buffer(string: text)
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)),
                promise: nil)
        }
    }
}
