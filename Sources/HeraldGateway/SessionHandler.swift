import DequeModule
import HeraldCore
import HeraldDelivery
import HeraldProtocol
import HeraldStorage
import Logging
import NIOCore

extension DeviceGateway {
    /// Runs one connection's session on its event loop. Events (frames, clock ticks,
    /// wake-ups from the dispatcher) are handled in order; while a store read the session
    /// asked for is under way, later events wait in `waiting`, so that the session sees
    /// the read's result before anything that came after it.
    final class SessionHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = MCSFrame
        typealias OutboundOut = MCSFrame

        /// Events a session may hold while a store read is under way; a device sending
        /// more frames than that meanwhile is cut off.
        static let maximumWaiting = 512

        private let gateway: DeviceGateway
        private var session: MCSSession
        private var context: ChannelHandlerContext?
        private var inbox: SessionInbox?
        private var connectionID: UInt64 = 0
        /// The device the login named, kept after the session closes (its `androidID` does
        /// not survive a failure), so that the registry lets go of this connection.
        private var loginDevice: UInt64?
        private var waiting: Deque<Event> = []
        private var actions: Deque<MCSSession.Action> = []
        private var state = State.active
        private var flush = Flush.flushed
        private let dozing = SessionFlag()

        init(gateway: DeviceGateway) {
            self.gateway = gateway
            session = MCSSession(
                configuration: gateway.configuration, now: gateway.clock.now(), throttle: gateway.collapsibleThrottle)
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
            let inbox = SessionInbox(
                handler: NIOLoopBound(self, eventLoop: context.eventLoop), eventLoop: context.eventLoop)
            self.inbox = inbox
            connectionID = gateway.connections.add(inbox)
            gateway.metrics.increment("herald_gateway_connections_total")
        }

        /// The context and the inbox both refer back to this handler: dropping them when the
        /// pipeline lets go of it ends both cycles, so the handler, its session and its
        /// buffers are freed with the connection (each closed connection used to keep about
        /// 1.4 kB for good).
        func handlerRemoved(context: ChannelHandlerContext) {
            inbox?.close()
            inbox = nil
            self.context = nil
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            flush = flush.reading()
            handle(.frame(unwrapInboundIn(data)))
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            flush = flush.readCompleted()
            flushIfNeeded()
            context.fireChannelReadComplete()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            handle(.inboundFailed("\(error)"))
        }

        func channelInactive(context: ChannelHandlerContext) {
            state = .closed
            inbox?.close()
            inbox = nil
            waiting.removeAll()
            actions.removeAll()
            let gateway = gateway
            let connectionID = connectionID
            gateway.connections.remove(connectionID, on: context.eventLoop)
            if let androidID = loginDevice {
                gateway.devices.unregister(androidID: androidID, connectionID: connectionID)
                // Other nodes stop signalling this node for the device, unless it is back already.
                let cluster = gateway.cluster
                if cluster.isShared, !gateway.devices.isConnected(androidID: androidID) {
                    gateway.work.submit { try? await cluster.releaseConnection(androidID: androidID) }
                }
            }
            context.fireChannelInactive()
        }

        /// Takes an event now, or after the store read under way.
        func handle(_ event: Event) {
            switch state {
            case .closed:
                return
            case .idle, .active:
                if case .tick = event, actions.isEmpty, waiting.isEmpty {
                    // On the tick after its last event, an idle session lets go of its queues' storage.
                    actions = []
                    waiting = []
                    state = .idle
                } else {
                    state = .active
                }
            case .awaitingStore:
                break
            }
            if state == .awaitingStore || !actions.isEmpty {
                guard waiting.count < Self.maximumWaiting else {
                    if case .frame = event {
                        waiting.removeAll()
                        waiting.append(.inboundFailed("too many frames at once"))
                    }
                    return
                }
                waiting.append(event)
                return
            }
            let reaction = react(to: event)
            if !reaction.isEmpty { state = .active }
            actions.append(contentsOf: reaction)
            proceed()
        }

        /// Carries out actions until one needs the store, then events that waited meanwhile.
        private func proceed() {
            while state == .idle || state == .active {
                if let action = actions.popFirst() {
                    perform(action)
                } else if let event = waiting.popFirst() {
                    actions.append(contentsOf: react(to: event))
                } else {
                    break
                }
            }
            // Answers to the frames of one read go out together when the read completes.
            flushIfNeeded()
            let idle = state == .idle && actions.isEmpty && waiting.isEmpty
            inbox?.nextTick(at: idle ? session.nextTick : Timestamp(milliseconds: 0))
        }

        /// Flushes written frames unless a socket read under way will.
        private func flushIfNeeded() {
            if flush == .due, let context {
                flush = .flushed
                context.flush()
                // A device that does not read what it is sent is not read from either, so
                // that answers to its frames cannot pile up here (NIO's write watermarks).
                if !context.channel.isWritable, state != .closed {
                    context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
                }
            }
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable {
                context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
                context.read()
            }
            context.fireChannelWritabilityChanged()
        }

        private func react(to event: Event) -> [MCSSession.Action] {
            defer { dozing.isSet = session.isDozing }
            let now = gateway.clock.now()
            switch event {
            case .frame(let frame): return session.received(frame, now: now)
            case .inboundFailed(let reason): return session.receivedMalformedData(reason)
            case .tick: return session.tick(now: now)
            case .wake: return session.wake()
            case .replaced: return session.replaced()
            case .deliverNow(let message): return session.deliverNow(message, now: now)
            case .stored(let entry): return session.stored(entry, now: now)
            case .offered(let entry, let maximumPending):
                return session.offered(entry, maximumPending: maximumPending, now: now)
            case .shutdown: return session.stopping()
            }
        }

        private func perform(_ action: MCSSession.Action) {
            guard let context else { return }
            let gateway = gateway
            switch action {
            case .send(let frame):
                context.write(wrapOutboundOut(frame), promise: nil)
                flush = flush.written()
            case .acknowledge(let ids):
                guard let androidID = session.androidID else { return }
                guard gateway.acknowledgementsHaveRoom else {
                    // The batch waiting for its write is full (SEMANTICS N3): the connection is
                    // not read, and acknowledges, until it has drained.
                    actions.prepend(action)
                    context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
                    wait {
                        await gateway.acknowledgementRoom()
                        return .resumeReading
                    }
                    return
                }
                // Rows still being written are deleted once they are.
                gateway.devices.acknowledged(androidID: androidID, ids)
            case .tookOffer(let persistentID):
                if let androidID = loginDevice {
                    gateway.devices.taken(androidID: androidID, persistentID: persistentID)
                    gateway.metrics.increment("herald_gateway_sent_before_stored_total")
                }
            case .declinedOffer(let persistentID):
                // Offers are made to logged-in sessions only: the device is the login's.
                if let androidID = loginDevice {
                    gateway.devices.declined(androidID: androidID, persistentID: persistentID)
                }
            case .authenticate(let androidID, let securityToken):
                loginDevice = androidID
                let registration = mailbox()
                let inbox = inbox
                wait {
                    let accepted = try await gateway.checkLogin(androidID: androidID, securityToken: securityToken)
                    gateway.logger.info(
                        accepted ? "device logged in" : "device login refused",
                        metadata: ["device": "\(androidID)"])
                    if accepted {
                        gateway.devices.register(androidID: androidID, registration)
                        // Closed while its login was checked: its own unregister may have run first.
                        if inbox?.isOpen != true {
                            gateway.devices.unregister(androidID: androidID, connectionID: registration.connectionID)
                        }
                        try? await gateway.store.recordConnection(androidID: androidID, at: gateway.clock.now())
                    }
                    return .authenticated(accepted)
                }
            case .loadPending(let after, let limit, let highPriorityOnly):
                guard let androidID = session.androidID else { return }
                wait {
                    let now = gateway.clock.now()
                    do {
                        let pending =
                            highPriorityOnly
                            ? try await gateway.store.pendingHighPriorityMessages(
                                androidID: androidID, after: after, limit: limit, now: now)
                            : try await gateway.store.pendingMessages(
                                androidID: androidID, after: after, limit: limit, now: now)
                        return .loaded(pending, requested: limit)
                    } catch StoreError.unavailable {
                        // The shared store is failing over: the device stays connected.
                        return .loadFailed
                    }
                }
            case .recordReceipt(let counter, let messageID):
                if let androidID = session.androidID {
                    gateway.work.submit {
                        await gateway.receipts.record(counter, messageID: messageID, androidID: androidID)
                    }
                }
            case .unregister(let token):
                guard let androidID = session.androidID else { return }
                wait {
                    if let registration = try await gateway.store.registration(token: token),
                        registration.androidID == androidID
                    {
                        _ = try await gateway.store.deleteRegistration(token: token, at: gateway.clock.now())
                    }
                    return .done
                }
            case .upstream(let request):
                guard let androidID = session.androidID else { return }
                guard let intake = gateway.upstream else {
                    actions.append(
                        contentsOf: session.upstreamHandled(
                            request, error: .serviceNotAvailable, now: gateway.clock.now()))
                    return
                }
                wait {
                    .upstreamHandled(request, error: try await intake.receive(request, androidID: androidID))
                }
            case .close(let reason):
                gateway.logger.debug("closing device connection", metadata: ["reason": "\(reason)"])
                state = .closed
                if flush.holdsWrites {
                    flush = .flushed
                    context.flush()
                }
                context.close(promise: nil)
            }
        }

        /// What a store call the session waited for came back with.
        private enum Outcome: Sendable {
            case authenticated(Bool)
            case loaded([QueuedMessage], requested: Int)
            case loadFailed
            case upstreamHandled(UpstreamRequest, error: UpstreamError?)
            case done
            /// The acknowledgements' batch has room again: the connection is read again.
            case resumeReading
        }

        /// Runs store work off the event loop; the session takes nothing else until it is back.
        private func wait(for work: @escaping @Sendable () async throws -> Outcome) {
            guard let context else { return }
            state = .awaitingStore
            let eventLoop = context.eventLoop
            let handler = NIOLoopBound(self, eventLoop: eventLoop)
            gateway.work.submit {
                let result: Result<Outcome, any Error>
                do {
                    result = .success(try await work())
                } catch {
                    result = .failure(error)
                }
                eventLoop.execute { handler.value.resume(with: result) }
            }
        }

        private func resume(with result: Result<Outcome, any Error>) {
            guard state == .awaitingStore else { return }
            state = .active
            let now = gateway.clock.now()
            switch result {
            case .success(.authenticated(let accepted)):
                // Logged in: the connection no longer counts against the unauthenticated bound.
                if accepted { context?.triggerUserOutboundEvent(ConnectionAdmission.Authenticated(), promise: nil) }
                actions.append(contentsOf: session.authenticated(accepted, now: now))
            case .success(.loaded(let pending, let limit)):
                actions.append(contentsOf: session.loaded(pending, requested: limit, now: now))
            case .success(.loadFailed):
                actions.append(contentsOf: session.loadFailed(now: now))
            case .success(.upstreamHandled(let request, let error)):
                actions.append(contentsOf: session.upstreamHandled(request, error: error, now: now))
            case .success(.done):
                break
            case .success(.resumeReading):
                if let context, context.channel.isWritable {
                    context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
                    context.read()
                }
            case .failure(let error):
                gateway.logger.debug("device connection ended", metadata: ["error": "\(error)"])
                actions = [.close(reason: "store error")]
            }
            dozing.isSet = session.isDozing
            proceed()
        }

        /// How the dispatcher and the fanout engine reach this session, from any thread.
        private func mailbox() -> SessionMailbox {
            SessionMailbox(connectionID: connectionID, inbox: inbox!, dozing: dozing, eventLoop: context!.eventLoop)
        }
    }
}
