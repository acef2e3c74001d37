import DequeModule
import HeraldCore
import HeraldProtocol
import HeraldStorage
import NIOCore

extension DeviceGateway {
    /// Carries out `MozillaPushTranslation` between a WebSocket connection and the MCS
    /// session handler behind it: the connection's bytes in (the opening handshake, then
    /// WebSocket frames, `WebSocketHandshake` and `WebSocketFrames`), MCS frames to the
    /// session; the session's MCS frames out as WebSocket frames. `hello`'s device and the
    /// channels' registrations are store work, done one at a time off the event loop; frames
    /// that arrive meanwhile wait, at most `maximumWaiting` of them.
    final class MozillaPushHandler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = MCSFrame
        typealias OutboundIn = MCSFrame
        typealias OutboundOut = ByteBuffer

        static let maximumWaiting = 16

        private let gateway: DeviceGateway
        private let service: MozillaPushService
        /// Where endpoints are issued: the public URL, or drop-in mode's updates host.
        private let endpointBase: String
        private var translation = MozillaPushTranslation()
        private var context: ChannelHandlerContext?
        /// The handshake is answered: what follows are frames.
        private var upgraded = false
        /// The start of a head or frame whose rest has not arrived; nil on an idle connection.
        private var partial: ByteBuffer?
        private var busy = false
        /// The close frame is on its way: the channel closes once it is out.
        private var closing = false
        /// Inside a read from the socket: the session is told the read completed with it.
        private var reading = false
        private var waiting: Deque<[UInt8]> = []

        init(gateway: DeviceGateway, service: MozillaPushService, endpointBase: String) {
            self.gateway = gateway
            self.service = service
            self.endpointBase = endpointBase
        }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

        func channelInactive(context: ChannelHandlerContext) {
            translation.closed()
            waiting.removeAll()
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            reading = true
            var bytes = unwrapInboundIn(data)
            if var held = partial.take() {
                held.writeBuffer(&bytes)
                bytes = held
            }
            guard !closing, upgraded || shakeHands(&bytes, context: context) else { return }
            do {
                while !closing,
                    let frame = try WebSocketFrames.read(
                        &bytes, maximumPayload: DeviceGateway.maximumMozillaPushFrameBytes)
                {
                    received(frame, context: context)
                }
            } catch {
                return perform([.close(code: error.closeCode, reason: "\(error)")])
            }
            if bytes.readableBytes > 0, !closing { partial = bytes }
        }

        /// Answers the opening handshake once its head is in; false while it is not, or when
        /// it is refused (the connection closes after the answer).
        private func shakeHands(_ bytes: inout ByteBuffer, context: ChannelHandlerContext) -> Bool {
            guard let end = WebSocketHandshake.headEnd(bytes.readableBytesView) else {
                if bytes.readableBytes < WebSocketHandshake.maximumHeadBytes {
                    partial = bytes
                } else {
                    context.close(promise: nil)
                }
                return false
            }
            let answer = WebSocketHandshake.answer(bytes.readBytes(length: end) ?? [])
            let response = context.channel.allocator.buffer(string: answer.response)
            guard answer.upgraded else {
                closeOnceWritten(response, context: context)
                return false
            }
            context.write(wrapOutboundOut(response), promise: nil)
            upgraded = true
            return true
        }

        private func received(_ frame: WebSocketFrames.Frame, context: ChannelHandlerContext) {
            switch frame.opcode {
            case .text where frame.fin:
                if busy {
                    guard waiting.count < Self.maximumWaiting else {
                        return perform([
                            .close(code: MozillaPushTranslation.policyViolation, reason: "too many at once")
                        ])
                    }
                    waiting.append(frame.payload)
                } else {
                    perform(translation.received(frame.payload, now: gateway.clock.now()))
                }
            case .ping:
                send(.pong, frame.payload, context: context)
            case .pong:
                perform(translation.receivedPong())
            case .close:
                perform([.close(code: 1000, reason: "closed by the client")])
            default:
                // Binary and fragmented messages are not of the protocol.
                perform([.close(code: 1003, reason: "not a text message")])
            }
        }

        /// The HTTP listener that took the connection is stopping, and waits for it to close:
        /// the client is told to go away, and reconnects elsewhere or later.
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
            perform(translation.fromSession(MCSFrame(tag: .close, payload: [])))
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            reading = false
            context.flush()
            context.fireChannelReadComplete()
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            // The session closes right after its last frame; the close frame goes out first.
            guard closing else { return context.close(mode: mode, promise: promise) }
            context.channel.closeFuture.cascade(to: promise)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            perform(translation.fromSession(unwrapOutboundIn(data)))
            promise?.succeed()
        }

        private func perform(_ actions: [MozillaPushTranslation.Action]) {
            guard let context else { return }
            for action in actions {
                switch action {
                case .toSession(let frame):
                    context.fireChannelRead(wrapInboundOut(frame))
                    // Outside a read (after store work) the session flushes its answers at once.
                    if !reading { context.fireChannelReadComplete() }
                case .toClient(let text):
                    send(.text, text.utf8, context: context)
                case .pingClient:
                    send(.ping, [], context: context)
                    context.flush()
                case .identify(let uaid):
                    wait { [service] in
                        let device = try await service.device(named: uaid)
                        return { translation in
                            translation.identified(androidID: device.androidID, securityToken: device.securityToken)
                        }
                    }
                case .register(let channelID, let key, let androidID):
                    let base = endpointBase
                    wait { [service] in
                        let answer = try await service.register(
                            channelID: channelID, key: key, androidID: androidID, endpointBase: base)
                        return { translation in
                            translation.registered(
                                channelID: channelID, endpoint: answer.endpoint, status: answer.status)
                        }
                    }
                case .unregister(let channelID, let androidID):
                    wait { [service] in
                        try await service.unregister(channelID: channelID, androidID: androidID)
                        return { translation in translation.unregistered(channelID: channelID) }
                    }
                case .close(let code, let reason):
                    gateway.logger.debug("closing mozilla push connection", metadata: ["reason": "\(reason)"])
                    var frame = context.channel.allocator.buffer(capacity: 4)
                    WebSocketFrames.write(.close, [UInt8(code >> 8), UInt8(code & 0xFF)], to: &frame)
                    // Closed once the close frame is out, so the client reads why.
                    return closeOnceWritten(frame, context: context)
                }
            }
        }

        private func send(
            _ opcode: WebSocketFrames.Opcode, _ payload: some Collection<UInt8>, context: ChannelHandlerContext
        ) {
            var frame = context.channel.allocator.buffer(capacity: payload.count + 10)
            WebSocketFrames.write(opcode, payload, to: &frame)
            context.write(wrapOutboundOut(frame), promise: nil)
        }

        /// Writes the connection's last bytes, then closes it; the session's own close waits.
        private func closeOnceWritten(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
            closing = true
            partial = nil
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in bound.value.close(promise: nil) }
        }

        /// What store work answers: the translation's next step.
        typealias Step = @Sendable (inout MozillaPushTranslation) -> [MozillaPushTranslation.Action]

        /// Runs store work off the event loop; frames wait until it is back.
        private func wait(_ work: @escaping @Sendable () async throws -> Step) {
            guard let context else { return }
            busy = true
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            gateway.work.submit {
                let result: Result<Step, any Error>
                do {
                    result = .success(try await work())
                } catch {
                    result = .failure(error)
                }
                eventLoop.execute { handler.value.resume(with: result) }
            }
        }

        private func resume(with result: Result<Step, any Error>) {
            busy = false
            switch result {
            case .success(let step):
                perform(step(&translation))
            case .failure(let error):
                gateway.logger.debug("mozilla push store work failed", metadata: ["error": "\(error)"])
                perform([.close(code: 1011, reason: "store error")])
            }
            while !busy, context != nil, let text = waiting.popFirst() {
                perform(translation.received(text, now: gateway.clock.now()))
            }
            context?.flush()
        }
    }
}
