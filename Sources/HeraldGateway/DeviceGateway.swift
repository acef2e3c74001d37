import DequeModule
public import HeraldCore
public import HeraldDelivery
import HeraldProtocol
public import HeraldStorage
public import HeraldTelemetry
public import Logging
public import NIOCore
public import NIOSSL
import Synchronization

/// The device gateway: TLS (or plain) TCP listeners speaking MCS, one session per
/// connection, run by a channel handler on the connection's event loop.
///
/// A session's state machine (`MCSSession`) decides; `SessionHandler` carries out its
/// actions: checks logins against the store, reads and acknowledges the device's queue,
/// and registers the device so that the dispatcher can wake it. An idle connection costs
/// its channel and handler, no task; only store reads leave the event loop.
public final class DeviceGateway: Sendable {
    private let configuration: GatewayConfiguration
    private let store: any HeraldStore
    private let devices: DeliveryPath
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let logger: Logger
    /// The TLS context devices connect with; the XMPP listener serves the same certificate.
    public let tls: NIOSSLContext?
    private let connections = ConnectionTable()
    private let acknowledgements: AcknowledgementBatcher
    private let boundPorts: Mutex<[Int]> = Mutex([])
    /// The nodes sharing the store, told when a device's connection here ends.
    private let cluster: any Cluster
    /// Store work the sessions hand over from their event loops; run by `run()`.
    private let work = WorkQueue()
    /// The listening channels, closed by `stop()`.
    private let listeners: Mutex<[any Channel]> = Mutex([])
    /// Finished by `stop()`: the clock ticks end.
    private let stopping: AsyncStream<Void>
    private let stopSignal: AsyncStream<Void>.Continuation

    private let collapsibleThrottle: MCSSession.CollapsibleThrottle?
    /// Where devices' upstream messages go; without it they are refused.
    private let upstream: UpstreamIntake?
    /// Bounds connections that have not logged in yet.
    private let admission: ConnectionAdmission?
    /// Receipts being counted now (`recordReceipt`), bounded by `maximumReceiptsInProgress`.
    private let receiptsInProgress = Atomic<Int>(0)
    static let maximumReceiptsInProgress = 64
    static let receiptRetryMilliseconds = 200

    /// A gateway serving `tls` (`tlsContext(for:)`, nil for plaintext).
    public init(
        configuration: GatewayConfiguration, tls: NIOSSLContext?, store: any HeraldStore, devices: DeliveryPath,
        clock: any HeraldClock,
        metrics: HeraldMetrics, acknowledgements: AcknowledgementBatcher,
        collapsibleThrottle: MCSSession.CollapsibleThrottle? = nil, cluster: any Cluster = SingleNodeCluster(),
        upstream: UpstreamIntake? = nil, admission: ConnectionAdmission? = nil, logger: Logger
    ) {
        self.admission = admission
        self.cluster = cluster
        self.upstream = upstream
        (stopping, stopSignal) = AsyncStream.makeStream(of: Void.self)
        self.collapsibleThrottle = collapsibleThrottle
        self.configuration = configuration
        self.store = store
        self.devices = devices
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.acknowledgements = acknowledgements
        self.tls = tls
    }

    /// The TLS context a gateway with `configuration` serves; nil for plaintext.
    public static func tlsContext(for configuration: GatewayConfiguration) throws -> NIOSSLContext? {
        switch configuration.security {
        case .plaintext:
            return nil
        case .files(let chain, let key):
            return try NIOSSLContext(
                configuration: configuration.dropIn.choosing(
                    GatewayCertificates.serverConfiguration(certificateChain: chain, privateKey: key)))
        case .generated(let dataDirectory, let hostnames):
            let certificates = try GatewayCertificates.loadOrCreate(dataDirectory: dataDirectory, hostnames: hostnames)
            return try NIOSSLContext(configuration: configuration.dropIn.choosing(certificates.serverConfiguration()))
        }
    }

    /// The ports the gateway listens on, once `run` has bound them.
    public var ports: [Int] { boundPorts.withLock { $0 } }

    /// How many connections are open, logged in or not.
    public var connectionCount: Int { connections.count }

    /// Binds every configured port and serves until cancelled; then closes every connection.
    public func run(onListening: @escaping @Sendable ([Int]) async -> Void = { _ in }) async throws {
        var servers: [any Channel] = []
        for port in configuration.ports {
            servers.append(try await bind(port: port))
        }
        let ports = servers.compactMap { $0.localAddress?.port }
        boundPorts.withLock { $0 = ports }
        logger.info(
            "device gateway listening",
            metadata: ["host": "\(configuration.host)", "ports": "\(ports)", "tls": "\(tls != nil)"])
        await onListening(ports)
        listeners.withLock { $0 = servers }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await self.tickConnections() }
            group.addTask { await self.work.run() }
            group.addTask {
                await withTaskCancellationHandler {
                    await self.acknowledgements.run()
                } onCancel: {
                    self.acknowledgements.finish()
                }
            }
            for server in servers {
                group.addTask {
                    try await withTaskCancellationHandler {
                        try await server.closeFuture.get()
                    } onCancel: {
                        self.stop()
                    }
                }
            }
        }
    }

    /// Stops gracefully: closes the listeners and tells every device to reconnect later,
    /// then `run()` writes the last acknowledgements and returns once the store work the
    /// sessions handed over is done.
    public func stop() {
        for server in listeners.withLock({ $0 }) { server.close(promise: nil) }
        connections.broadcast(.shutdown)
        stopSignal.finish()
        acknowledgements.finish()
        work.finish()
    }

    private func bind(port: Int) async throws -> any Channel {
        try await TLSListener.bind(
            host: configuration.host, port: port, tls: tls, backlog: 1024, admission: admission
        ) { pipeline in
            try self.addSession(to: pipeline)
        }
    }

    /// Takes over a connection another listener accepted and found to be a device's (drop-in
    /// mode's port 443, told apart by its TLS server name): TLS under `tls`, then a session
    /// as on the gateway's own ports. Must be called on the channel's event loop.
    public func adopt(_ channel: any Channel, tls: NIOSSLContext) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(NIOSSLServerHandler(context: tls))
        try addSession(to: pipeline)
    }

    private func addSession(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        try pipeline.addHandler(
            MCSFrameDecoderHandler(expectsVersion: true, maximumPayloadBytes: configuration.maximumFrameBytes))
        try pipeline.addHandler(MCSFrameEncoderHandler(sendsVersion: true))
        try pipeline.addHandler(SessionHandler(gateway: self))
    }

    /// Sends a clock tick to every connection every second, for heartbeats and deadlines.
    private func tickConnections() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    if !Task.isCancelled { self.connections.tick(now: self.clock.now()) }
                }
            }
            // Ends when `stop()` finishes the stream.
            group.addTask { for await _ in self.stopping {} }
            await group.next()
            group.cancelAll()
        }
    }

    /// What a connection's session reacts to.
    enum Event: Sendable {
        case frame(MCSFrame)
        case inboundFailed(String)
        case tick
        case wake
        case replaced
        case deliverNow(QueuedMessage)
        case stored(QueuedMessage)
        case offered(QueuedMessage, maximumPending: Int)
        case shutdown
    }

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
        /// A store read or write the session waits for.
        private var busy = false
        /// The queues have taken storage since a tick last released it.
        private var holdsStorage = false
        private var closed = false
        private var needsFlush = false
        /// Inside a read from the socket: writes are flushed when it completes.
        private var reading = false
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
            reading = true
            handle(.frame(unwrapInboundIn(data)))
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            reading = false
            flushIfNeeded()
            context.fireChannelReadComplete()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            handle(.inboundFailed("\(error)"))
        }

        func channelInactive(context: ChannelHandlerContext) {
            closed = true
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
            guard !closed else { return }
            if case .tick = event, !busy, actions.isEmpty, waiting.isEmpty {
                // On the tick after its last event, an idle session lets go of its queues' storage.
                actions = []
                waiting = []
                holdsStorage = false
            } else {
                holdsStorage = true
            }
            if busy || !actions.isEmpty {
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
            if !reaction.isEmpty { holdsStorage = true }
            actions.append(contentsOf: reaction)
            proceed()
        }

        /// Carries out actions until one needs the store, then events that waited meanwhile.
        private func proceed() {
            while !busy && !closed {
                if let action = actions.popFirst() {
                    perform(action)
                } else if let event = waiting.popFirst() {
                    actions.append(contentsOf: react(to: event))
                } else {
                    break
                }
            }
            // Answers to the frames of one read go out together when the read completes.
            if !reading { flushIfNeeded() }
            let idle = !busy && !holdsStorage && actions.isEmpty && waiting.isEmpty
            inbox?.nextTick(at: idle ? session.nextTick : Timestamp(milliseconds: 0))
        }

        private func flushIfNeeded() {
            if needsFlush, let context {
                needsFlush = false
                context.flush()
                // A device that does not read what it is sent is not read from either, so
                // that answers to its frames cannot pile up here (NIO's write watermarks).
                if !context.channel.isWritable, !closed {
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
                needsFlush = true
            case .acknowledge(let ids):
                // Rows still being written are deleted once they are.
                if let androidID = session.androidID { gateway.devices.acknowledged(androidID: androidID, ids) }
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
                    let accepted = await gateway.checkLogin(androidID: androidID, securityToken: securityToken)
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
                    let pending =
                        highPriorityOnly
                        ? try await gateway.store.pendingHighPriorityMessages(
                            androidID: androidID, after: after, limit: limit, now: now)
                        : try await gateway.store.pendingMessages(
                            androidID: androidID, after: after, limit: limit, now: now)
                    return .loaded(pending, requested: limit)
                }
            case .recordReceipt(let counter, let messageID):
                if let androidID = session.androidID {
                    gateway.work.submit {
                        await gateway.recordReceipt(counter, messageID: messageID, androidID: androidID)
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
                closed = true
                if needsFlush {
                    needsFlush = false
                    context.flush()
                }
                context.close(promise: nil)
            }
        }

        /// What a store call the session waited for came back with.
        private enum Outcome: Sendable {
            case authenticated(Bool)
            case loaded([QueuedMessage], requested: Int)
            case upstreamHandled(UpstreamRequest, error: UpstreamError?)
            case done
        }

        /// Runs store work off the event loop; the session takes nothing else until it is back.
        private func wait(for work: @escaping @Sendable () async throws -> Outcome) {
            guard let context else { return }
            busy = true
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
            busy = false
            holdsStorage = true
            guard !closed else { return }
            let now = gateway.clock.now()
            switch result {
            case .success(.authenticated(let accepted)):
                // Logged in: the connection no longer counts against the unauthenticated bound.
                if accepted { context?.triggerUserOutboundEvent(ConnectionAdmission.Authenticated(), promise: nil) }
                actions.append(contentsOf: session.authenticated(accepted, now: now))
            case .success(.loaded(let pending, let limit)):
                actions.append(contentsOf: session.loaded(pending, requested: limit, now: now))
            case .success(.upstreamHandled(let request, let error)):
                actions.append(contentsOf: session.upstreamHandled(request, error: error, now: now))
            case .success(.done):
                break
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

    /// A function run by an event loop's timer (`SessionMailbox.schedule`).
    struct LoopTimer: NIOScheduledCallbackHandler, Sendable {
        let body: @Sendable () -> Void

        func handleScheduledCallback(eventLoop: some EventLoop) { body() }
    }
    /// Counts an impression or an open against the message's project, app and label, once
    /// per device, message and kind, and only from a device the message was addressed to
    /// (`addressee(of:on:)`): a receipt from any other device is dropped.
    ///
    /// A device is sent a message while the message is being written, so its impression
    /// can come back before the write is done: an unknown message is looked for once more
    /// after `receiptRetryMilliseconds`, then the receipt is dropped. At most
    /// `maximumReceiptsInProgress` receipts are worked on at once; past that they are dropped.
    private func recordReceipt(_ counter: DeliveryCounter, messageID: String, androidID: UInt64) async {
        guard receiptsInProgress.add(1, ordering: .relaxed).newValue <= Self.maximumReceiptsInProgress else {
            receiptsInProgress.subtract(1, ordering: .relaxed)
            metrics.increment("herald_receipts_refused_total", [("reason", "busy")])
            return
        }
        defer { receiptsInProgress.subtract(1, ordering: .relaxed) }
        var found = try? await store.message(id: messageID)
        if found == nil {
            try? await Task.sleep(for: .milliseconds(Self.receiptRetryMilliseconds))
            found = try? await store.message(id: messageID)
        }
        guard let message = found, let registration = try? await addressee(of: message, on: androidID) else {
            metrics.increment("herald_receipts_refused_total", [("reason", "not-addressed")])
            return
        }
        let stat = DeliveryStat(
            DeliveryStatKey(
                projectID: message.projectID, at: message.createdAt, appID: registration.appID,
                label: message.analyticsLabel),
            counter)
        _ = try? await store.recordReceipt(stat, messageID: message.id, androidID: androidID)
    }

    /// The registration on this device that `message` was addressed to: its token or
    /// installation, a member of its device group, or one subscribed as its topic or
    /// condition asks; nil when none is.
    private func addressee(of message: StoredMessage, on androidID: UInt64) async throws -> Registration? {
        let registrations = try await store.registrations(androidID: androidID).filter {
            $0.projectID == message.projectID
        }
        switch message.targetKind {
        case "token":
            if let direct = registrations.first(where: { $0.token == message.target }) { return direct }
            let group = try await store.deviceGroup(
                projectID: message.projectID, name: nil, notificationKey: message.target)
            return registrations.first { group?.members.contains($0.token) == true }
        case "fid":
            return registrations.first { $0.installationID == message.target }
        case "topic", "condition":
            // Only subscriptions made before the message was sent: the fanout reached those.
            let condition = message.targetKind == "topic" ? nil : try? Condition.parse(message.target)
            for registration in registrations where registration.createdAt <= message.createdAt {
                let topics = Set(
                    try await store.subscriptions(token: registration.token).filter {
                        $0.createdAt <= message.createdAt
                    }.map(\.topic))
                if condition.map({ $0.matches(topics.contains) }) ?? topics.contains(message.target) {
                    return registration
                }
            }
            return nil
        default:
            return nil
        }
    }

    private func checkLogin(androidID: UInt64, securityToken: UInt64) async -> Bool {
        guard androidID != 0, let device = try? await store.device(androidID: androidID) else { return false }
        return device.securityToken == securityToken
    }
}
