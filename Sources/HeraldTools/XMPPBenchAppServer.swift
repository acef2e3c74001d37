public import HeraldCore
import HeraldXMPP
public import NIOCore
import NIOPosix
import Synchronization

/// An app server for benchmarks: one plain-TCP XMPP connection that logs in with the server
/// key, binds, and acknowledges every upstream message and receipt it is sent, counting
/// them; no task per message.
public enum XMPPBenchAppServer {
    /// Opens a connection and logs in; `onUpstream` hears each message id as it arrives.
    public static func connect(
        host: String, port: Int, senderID: Int64, serverKey: String,
        onUpstream: @escaping @Sendable (String, ContinuousClock.Instant) -> Void
    ) async throws -> any Channel {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        XMPPBenchAppServerHandler(
                            senderID: senderID, serverKey: serverKey, bound: channel.eventLoop.makePromise(),
                            onUpstream: onUpstream))
                }
            }.connect(host: host, port: port).get()
        let handler = try await channel.pipeline.handler(type: XMPPBenchAppServerHandler.self).get()
        try await handler.bound.futureResult.get()
        return channel
    }
}

final class XMPPBenchAppServerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct LoginFailed: Error {
        var stanza: String
    }

    let bound: EventLoopPromise<Void>
    private let senderID: Int64
    private let serverKey: String
    private let onUpstream: @Sendable (String, ContinuousClock.Instant) -> Void
    private var parser = XMPPStreamParser()
    private var isBound = false

    private static let opening =
        "<stream:stream to=\"fcm.googleapis.com\" version=\"1.0\" xmlns=\"jabber:client\" "
        + "xmlns:stream=\"http://etherx.jabber.org/streams\">"

    init(
        senderID: Int64, serverKey: String, bound: EventLoopPromise<Void>,
        onUpstream: @escaping @Sendable (String, ContinuousClock.Instant) -> Void
    ) {
        self.senderID = senderID
        self.serverKey = serverKey
        self.bound = bound
        self.onUpstream = onUpstream
    }

    func channelActive(context: ChannelHandlerContext) {
        write(Self.opening, context)
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard let events = try? parser.parse(bytes.readableBytesView) else {
            fail(LoginFailed(stanza: "not well-formed"), context)
            return
        }
        let now = ContinuousClock.now
        for case .stanza(let stanza) in events {
            switch stanza.localName {
            case "features" where stanza.child("mechanisms") != nil:
                let plain = Base64URL.encodeStandard(Array("\0\(senderID)@fcm.googleapis.com\0\(serverKey)".utf8))
                write(
                    "<auth xmlns=\"urn:ietf:params:xml:ns:xmpp-sasl\" mechanism=\"PLAIN\">\(plain)</auth>", context)
            case "success":
                parser.restart()
                write(Self.opening, context)
            case "features" where stanza.child("bind") != nil:
                write("<iq type=\"set\" id=\"b\"><bind xmlns=\"urn:ietf:params:xml:ns:xmpp-bind\"/></iq>", context)
            case "iq" where !isBound:
                isBound = true
                bound.succeed()
            case "message":
                guard let text = stanza.child("gcm")?.text, let json = try? JSONParser.parse(Array(text.utf8)),
                    let id = json["message_id"]?.stringValue,
                    json["message_type"] == nil
                        || json["message_type"]
                            == .string("receipt")
                else { continue }
                onUpstream(id, now)
                let ack = JSONValue.object([
                    ("to", json["from"] ?? .string("")), ("message_id", .string(id)), ("message_type", .string("ack")),
                ])
                write(
                    "<message id=\"\"><gcm xmlns=\"google:mobile:data\">"
                        + XMPPElement.escaped(ack.rendered, quotes: false) + "</gcm></message>", context)
            case "failure", "error":
                fail(LoginFailed(stanza: stanza.rendered), context)
            default:
                continue
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(LoginFailed(stanza: "closed"), context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context)
    }

    private func write(_ text: String, _ context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
    }

    private func fail(_ error: any Error, _ context: ChannelHandlerContext) {
        if !isBound {
            isBound = true
            bound.fail(error)
        }
        context.close(promise: nil)
    }
}
