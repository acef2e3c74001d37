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
    let configuration: GatewayConfiguration
    let store: any RegistrationStore & TopicStore & QueueStore & StatsStore
    let devices: DeliveryPath
    let clock: any HeraldClock
    let metrics: HeraldMetrics
    let logger: Logger
    /// The TLS context devices connect with; the XMPP listener serves the same certificate.
    public let tls: NIOSSLContext?
    let connections = ConnectionTable()
    private let acknowledgements: AcknowledgementBatcher
    private let boundPorts: Mutex<[Int]> = Mutex([])
    /// The nodes sharing the store, told when a device's connection here ends.
    let cluster: any Cluster
    /// Store work the sessions hand over from their event loops; run by `run()`.
    let work = WorkQueue()
    /// The listening channels, closed by `stop()`.
    private let listeners: Mutex<[any Channel]> = Mutex([])
    /// Finished by `stop()`: the clock ticks end.
    private let stopping: AsyncStream<Void>
    private let stopSignal: AsyncStream<Void>.Continuation

    let collapsibleThrottle: MCSSession.CollapsibleThrottle?
    /// Where devices' upstream messages go; without it they are refused.
    let upstream: UpstreamIntake?
    /// Bounds connections that have not logged in yet.
    private let admission: ConnectionAdmission?
    /// Counts devices' impressions and opens.
    let receipts: ReceiptRecorder

    /// A gateway serving `tls` (`tlsContext(for:)`, nil for plaintext).
    public init(
        configuration: GatewayConfiguration, tls: NIOSSLContext?,
        store: any RegistrationStore & TopicStore & QueueStore & StatsStore, devices: DeliveryPath,
        clock: any HeraldClock,
        metrics: HeraldMetrics, acknowledgements: AcknowledgementBatcher,
        collapsibleThrottle: MCSSession.CollapsibleThrottle? = nil, cluster: any Cluster = SingleNodeCluster(),
        upstream: UpstreamIntake? = nil, admission: ConnectionAdmission? = nil,
        projects: @escaping @Sendable (String) -> Project? = { _ in nil }, logger: Logger
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
        receipts = ReceiptRecorder(store: store, metrics: metrics, projects: projects, logger: logger)
    }

    /// Whether the acknowledgements waiting for their write leave room for more (SEMANTICS N3).
    var acknowledgementsHaveRoom: Bool { acknowledgements.hasRoom }

    /// Returns once the acknowledgements waiting for their write leave room for more.
    func acknowledgementRoom() async { await acknowledgements.room() }

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

    /// Whether the credentials are a device's. A store that cannot answer throws: the
    /// connection then closes without a refusal, which a device would take for a verdict
    /// on its credentials, and the device connects again later.
    func checkLogin(androidID: UInt64, securityToken: UInt64) async throws -> Bool {
        guard androidID != 0, let device = try await store.device(androidID: androidID) else { return false }
        return device.securityToken == securityToken
    }
}
