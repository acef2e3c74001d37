import DequeModule
public import HeraldCore
public import HeraldDelivery
import HeraldProtocol
public import HeraldStorage
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// The device gateway: TLS (or plain) TCP listeners speaking MCS, one session per
/// connection, each in its own child task.
///
/// A session's state machine (`MCSSession`) decides; this type carries out its actions:
/// checks logins against the store, reads and acknowledges the device's queue, and
/// registers the device so that the dispatcher can wake it.
public final class DeviceGateway: Sendable {
    private let configuration: GatewayConfiguration
    private let store: any HeraldStore
    private let devices: DeviceRegistry
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let logger: Logger
    private let tls: NIOSSLContext?
    private let connections = ConnectionTable()
    private let acknowledgements: AcknowledgementBatcher
    private let boundPorts: Mutex<[Int]> = Mutex([])

    private let collapsibleThrottle: MCSSession.CollapsibleThrottle?

    public init(
        configuration: GatewayConfiguration, store: any HeraldStore, devices: DeviceRegistry, clock: any HeraldClock,
        metrics: HeraldMetrics, collapsibleThrottle: MCSSession.CollapsibleThrottle? = nil, logger: Logger
    ) throws {
        self.collapsibleThrottle = collapsibleThrottle
        self.configuration = configuration
        self.store = store
        self.devices = devices
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        acknowledgements = AcknowledgementBatcher(store: store, metrics: metrics, logger: logger)
        switch configuration.security {
        case .plaintext:
            tls = nil
        case .files(let chain, let key):
            tls = try NIOSSLContext(
                configuration: GatewayCertificates.serverConfiguration(certificateChain: chain, privateKey: key))
        case .generated(let dataDirectory, let hostnames):
            let certificates = try GatewayCertificates.loadOrCreate(dataDirectory: dataDirectory, hostnames: hostnames)
            tls = try NIOSSLContext(configuration: certificates.serverConfiguration())
        }
    }

    /// The ports the gateway listens on, once `run` has bound them.
    public var ports: [Int] { boundPorts.withLock { $0 } }

    /// How many connections are open, logged in or not.
    public var connectionCount: Int { connections.count }

    /// Binds every configured port and serves until cancelled.
    public func run(onListening: @escaping @Sendable ([Int]) async -> Void = { _ in }) async throws {
        var servers: [NIOAsyncChannel<NIOAsyncChannel<MCSFrame, MCSFrame>, Never>] = []
        for port in configuration.ports {
            servers.append(try await bind(port: port))
        }
        let ports = servers.compactMap { $0.channel.localAddress?.port }
        boundPorts.withLock { $0 = ports }
        logger.info(
            "device gateway listening",
            metadata: ["host": "\(configuration.host)", "ports": "\(ports)", "tls": "\(tls != nil)"])
        await onListening(ports)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.tickConnections() }
            group.addTask {
                await withTaskCancellationHandler {
                    await self.acknowledgements.run()
                } onCancel: {
                    self.acknowledgements.finish()
                }
            }
            for server in servers {
                group.addTask { try await self.accept(on: server) }
            }
        }
    }

    /// Connection tasks are spread over this many task groups: a group forgets a finished
    /// child by walking its list of children, so one group of 100,000 connections would
    /// spend seconds of CPU when many of them close at once.
    static let connectionShards = 64

    /// Accepts connections on one listener until it closes or the gateway stops.
    private func accept(on server: NIOAsyncChannel<NIOAsyncChannel<MCSFrame, MCSFrame>, Never>) async throws {
        typealias Connection = NIOAsyncChannel<MCSFrame, MCSFrame>
        var shards: [AsyncStream<Connection>.Continuation] = []
        try await withThrowingDiscardingTaskGroup { group in
            for _ in 0..<Self.connectionShards {
                let (stream, continuation) = AsyncStream.makeStream(of: Connection.self)
                shards.append(continuation)
                group.addTask {
                    await withDiscardingTaskGroup { connections in
                        for await connection in stream {
                            connections.addTask { await self.serve(connection) }
                        }
                    }
                }
            }
            defer { for shard in shards { shard.finish() } }
            try await server.executeThenClose { inbound in
                var next = 0
                for try await connection in inbound {
                    shards[next].yield(connection)
                    next = (next + 1) % shards.count
                }
            }
        }
    }

    private func bind(port: Int) async throws -> NIOAsyncChannel<NIOAsyncChannel<MCSFrame, MCSFrame>, Never> {
        let tls = tls
        let maximumFrameBytes = configuration.maximumFrameBytes
        return try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: configuration.host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(
                            MCSFrameDecoderHandler(expectsVersion: true, maximumPayloadBytes: maximumFrameBytes)))
                    try channel.pipeline.syncOperations.addHandler(
                        MessageToByteHandler(MCSFrameEncoderHandler(sendsVersion: true)))
                    return try NIOAsyncChannel<MCSFrame, MCSFrame>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Sends a clock tick to every connection every second, for heartbeats and deadlines.
    private func tickConnections() async throws {
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(1))
            connections.broadcast(.tick)
        }
    }

    /// What a connection's session reacts to.
    enum Event: Sendable {
        case frame(MCSFrame)
        case inboundEnded
        case inboundFailed(String)
        case tick
        case wake
        case replaced
        case deliverNow(QueuedMessage)
        case stored(QueuedMessage)
    }

    private func serve(_ channel: NIOAsyncChannel<MCSFrame, MCSFrame>) async {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingOldest(512))
        let connectionID = connections.add(continuation)
        metrics.increment("herald_gateway_connections_total")
        var session = MCSSession(configuration: configuration, now: clock.now(), throttle: collapsibleThrottle)
        let dozing = SessionFlag()
        // Set when the event stream was full and a wake was lost; the next tick wakes the session.
        let missedWake = SessionFlag()
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            for try await frame in inbound {
                                if case .dropped = continuation.yield(.frame(frame)) {
                                    continuation.yield(.inboundFailed("too many frames at once"))
                                    break
                                }
                            }
                            continuation.yield(.inboundEnded)
                        } catch {
                            continuation.yield(.inboundFailed("\(error)"))
                        }
                    }
                    eventLoop: for await event in events {
                        var actions = Deque(react(to: event, session: &session))
                        if case .tick = event, missedWake.isSet {
                            missedWake.isSet = false
                            actions.append(contentsOf: session.wake())
                        }
                        defer { dozing.isSet = session.isDozing }
                        while let action = actions.popFirst() {
                            switch action {
                            case .send(let frame):
                                try await outbound.write(frame)
                            case .authenticate(let androidID, let securityToken):
                                let accepted = await checkLogin(androidID: androidID, securityToken: securityToken)
                                if accepted {
                                    devices.register(
                                        androidID: androidID,
                                        DeviceRegistry.Connection(
                                            id: connectionID,
                                            wake: {
                                                if case .dropped = continuation.yield(.wake) { missedWake.isSet = true }
                                            },
                                            replace: { continuation.yield(.replaced) },
                                            deliverNow: { message in
                                                guard !dozing.isSet || message.isHighPriority else { return false }
                                                if case .enqueued = continuation.yield(.deliverNow(message)) {
                                                    return true
                                                }
                                                return false
                                            },
                                            stored: { entry in
                                                if case .dropped = continuation.yield(.stored(entry)) {
                                                    missedWake.isSet = true
                                                }
                                            }))
                                    try? await store.recordConnection(androidID: androidID, at: clock.now())
                                }
                                actions.append(contentsOf: session.authenticated(accepted, now: clock.now()))
                            case .acknowledge(let ids):
                                if let androidID = session.androidID {
                                    await acknowledgements.submit(androidID: androidID, persistentIDs: ids)
                                }
                            case .loadPending(let after, let limit, let highPriorityOnly):
                                guard let androidID = session.androidID else { continue }
                                let pending =
                                    highPriorityOnly
                                    ? try await store.pendingHighPriorityMessages(
                                        androidID: androidID, after: after, limit: limit, now: clock.now())
                                    : try await store.pendingMessages(
                                        androidID: androidID, after: after, limit: limit, now: clock.now())
                                actions.append(contentsOf: session.loaded(pending, requested: limit, now: clock.now()))
                            case .recordReceipt(let counter, let messageID):
                                if let androidID = session.androidID {
                                    await recordReceipt(counter, messageID: messageID, androidID: androidID)
                                }
                            case .unregister(let token):
                                if let androidID = session.androidID,
                                    let registration = try await store.registration(token: token),
                                    registration.androidID == androidID
                                {
                                    _ = try await store.deleteRegistration(token: token, at: clock.now())
                                }
                            case .close(let reason):
                                logger.debug("closing device connection", metadata: ["reason": "\(reason)"])
                                break eventLoop
                            }
                        }
                    }
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("device connection ended", metadata: ["error": "\(error)"])
        }
        continuation.finish()
        connections.remove(connectionID)
        if let androidID = session.androidID {
            devices.unregister(androidID: androidID, connectionID: connectionID)
            // Other nodes stop signalling this node for the device, unless it is back already.
            if let cluster = store as? any ClusterStore, !devices.isConnected(androidID: androidID) {
                try? await cluster.releaseConnection(androidID: androidID)
            }
        }
    }

    private func react(to event: Event, session: inout MCSSession) -> [MCSSession.Action] {
        switch event {
        case .frame(let frame): return session.received(frame, now: clock.now())
        case .inboundEnded: return [.close(reason: "the device closed the connection")]
        case .inboundFailed(let reason): return session.receivedMalformedData(reason)
        case .tick: return session.tick(now: clock.now())
        case .wake: return session.wake()
        case .replaced: return session.replaced()
        case .deliverNow(let message): return session.deliverNow(message, now: clock.now())
        case .stored(let entry): return session.stored(entry, now: clock.now())
        }
    }

    /// Counts an impression or an open against the message's project, app and label.
    private func recordReceipt(_ counter: DeliveryCounter, messageID: String, androidID: UInt64) async {
        guard let message = try? await store.message(id: messageID),
            let registration = try? await store.registrations(androidID: androidID).first(where: {
                $0.projectID == message.projectID
            })
        else { return }
        let body = try? JSONParser.parse(Array(message.body.utf8))
        let label =
            body?["android"]?["fcm_options"]?["analytics_label"]?.stringValue
            ?? body?["fcm_options"]?["analytics_label"]?.stringValue
        try? await store.record([
            DeliveryStat(
                DeliveryStatKey(
                    projectID: message.projectID, at: message.createdAt, appID: registration.appID, label: label),
                counter)
        ])
    }

    private func checkLogin(androidID: UInt64, securityToken: UInt64) async -> Bool {
        guard androidID != 0, let device = try? await store.device(androidID: androidID) else { return false }
        return device.securityToken == securityToken
    }
}

/// Whether a session's device dozes, readable from any thread.
/// A flag one task sets and another reads: whether a session dozes, whether it missed a wake.
final class SessionFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool {
        get { value.load(ordering: .relaxed) }
        set { value.store(newValue, ordering: .relaxed) }
    }
}

/// Every open connection's event stream, so that one task can tick them all.
final class ConnectionTable: Sendable {
    private let state: Mutex<(next: UInt64, streams: [UInt64: AsyncStream<DeviceGateway.Event>.Continuation])> =
        Mutex((1, [:]))

    func add(_ continuation: AsyncStream<DeviceGateway.Event>.Continuation) -> UInt64 {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.streams[id] = continuation
            return id
        }
    }

    func remove(_ id: UInt64) {
        _ = state.withLock { $0.streams.removeValue(forKey: id) }
    }

    func broadcast(_ event: DeviceGateway.Event) {
        let streams = state.withLock { Array($0.streams.values) }
        for stream in streams { stream.yield(event) }
    }

    var count: Int { state.withLock { $0.streams.count } }
}
