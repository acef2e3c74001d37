import HeraldCore
import HeraldGateway
import NIOCore

/// The I/O around one `XMPPSession`: bytes in through the parser, actions out as writes,
/// credential checks and sends handed to the gateway's work queue and their outcomes
/// brought back to the connection's event loop.
final class XMPPConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gateway: XMPPGateway
    private var parser = XMPPStreamParser()
    private var session = XMPPSession(streamID: SecureRandom.token(bytes: 12))
    private var context: ChannelHandlerContext?
    private var connectionID: UInt64?
    /// The project that authenticated, counted against its connection limits until the close.
    private var project: Project?
    private var needsFlush = false
    private var reading = false
    /// The lease holder name of this connection's upstream messages.
    private let holder: String
    /// Whether a lease of upstream messages is under way.
    private var leasing = false
    private var joined = false
    private var poll: RepeatedTask?

    init(gateway: XMPPGateway) {
        self.gateway = gateway
        holder = gateway.holderPrefix + SecureRandom.hex(bytes: 8)
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        connectionID = gateway.register(handler)
        context.eventLoop.scheduleTask(in: .seconds(Int64(gateway.configuration.authenticationTimeoutSeconds))) {
            handler.value.authenticationDeadline()
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connectionID { gateway.unregister(connectionID, projectID: project?.id) }
        connectionID = nil
        poll?.cancel()
        poll = nil
        if joined { releaseLeases() }
        if let project { gateway.limits.release(projectID: project.id) }
        project = nil
        self.context = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        reading = true
        do {
            for event in try parser.parse(bytes.readableBytesView) {
                perform(session.received(event))
            }
        } catch {
            gateway.logger.debug("XMPP stream failed", metadata: ["error": "\(error)"])
            perform(session.failed())
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        reading = false
        flush()
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        gateway.logger.debug("XMPP connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    /// The node stops.
    func drain() {
        perform(session.drain())
        flush()
    }

    private func authenticationDeadline() {
        perform(session.timedOut())
        flush()
    }

    /// Leases as many upstream messages and receipts as the session has room for and sends
    /// them; again at once while whole pages come back.
    func pullUpstream() {
        guard !leasing, let context, let project, case let room = session.upstreamRoom, room > 0 else { return }
        leasing = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let (gateway, holder) = (gateway, holder)
        gateway.work.submit {
            let now = gateway.clock.now()
            let leased =
                (try? await gateway.upstream.leaseUpstream(
                    projectID: project.id, holder: holder, now: now,
                    until: now.adding(seconds: gateway.configuration.upstreamLeaseSeconds), limit: room)) ?? []
            handler.eventLoop.execute { handler.value.leased(leased, requested: room) }
        }
    }

    private func leased(_ messages: [UpstreamMessage], requested: Int) {
        leasing = false
        guard context != nil else {
            if !messages.isEmpty { releaseLeases() }
            return
        }
        perform(session.offer(messages))
        if !messages.isEmpty { gateway.metrics.increment("herald_xmpp_upstream_sent_total", by: messages.count) }
        if messages.count == requested { pullUpstream() }
    }

    private func releaseLeases() {
        let (upstream, holder) = (gateway.upstream, holder)
        gateway.work.submit { try? await upstream.releaseUpstream(holderPrefix: holder) }
    }

    /// The session is established: it takes upstream messages, announced or polled for.
    private func join(_ context: ChannelHandlerContext) {
        guard !joined, session.phase == .established, let connectionID, let project else { return }
        joined = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        gateway.joined(connectionID, projectID: project.id, handler: handler)
        let interval = TimeAmount.milliseconds(gateway.configuration.upstreamPollMilliseconds)
        poll = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            handler.value.pullUpstream()
        }
        pullUpstream()
    }

    private func perform(_ actions: [XMPPSession.Action]) {
        guard let context else { return }
        defer { join(context) }
        for action in actions {
            switch action {
            case .write(let text):
                context.write(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
                needsFlush = true
            case .restartStream:
                parser.restart()
            case .authenticate(let senderID, let serverKey):
                let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
                let gateway = gateway
                gateway.work.submit {
                    let (outcome, project) = await gateway.admit(senderID: senderID, serverKey: serverKey)
                    handler.eventLoop.execute { handler.value.authenticated(outcome, project: project) }
                }
            case .send(let message):
                guard let project else { continue }
                let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
                let gateway = gateway
                gateway.work.submit {
                    let error = await gateway.accept(message, project: project)
                    handler.eventLoop.execute { handler.value.answered(message, error: error) }
                }
            case .acknowledgeUpstream(let messageID, let token):
                guard let project else { continue }
                let upstream = gateway.upstream
                gateway.work.submit {
                    _ = try? await upstream.acknowledgeUpstream(
                        projectID: project.id, messageID: messageID, token: token)
                }
                // Room was made: the next messages go now.
                context.eventLoop.execute { [handler = NIOLoopBound(self, eventLoop: context.eventLoop)] in
                    handler.value.pullUpstream()
                }
            case .close:
                flush()
                context.close(promise: nil)
            }
        }
        if !reading { flush() }
    }

    private func authenticated(_ outcome: XMPPSession.Authentication, project: Project?) {
        guard context != nil else {
            // Closed while the check ran: give back the connection it counted.
            if let project { gateway.limits.release(projectID: project.id) }
            return
        }
        self.project = project
        if outcome == .accepted {
            // The connection no longer counts against the unauthenticated bound.
            context?.triggerUserOutboundEvent(ConnectionAdmission.Authenticated(), promise: nil)
        }
        perform(session.authenticated(outcome))
    }

    private func answered(_ message: XMPPDownstream, error: HeraldError?) {
        perform(session.answered(message, error: error))
    }

    private func flush() {
        guard needsFlush, let context else { return }
        needsFlush = false
        context.flush()
    }
}
