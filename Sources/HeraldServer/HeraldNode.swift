public import HeraldCore
public import HeraldDelivery
public import HeraldGateway
public import HeraldHTTP
public import HeraldStorage
public import Hummingbird
public import Logging
public import Prometheus
public import ServiceLifecycle

/// One Herald process: the store, the credential cache, the dispatcher, the HTTP
/// surfaces and the device gateway, run as one `ServiceGroup` that shuts down gracefully
/// on SIGINT or SIGTERM.
public struct HeraldNode: Sendable {
    public let configuration: ServerConfiguration
    public let store: any HeraldStore
    public let clock: any HeraldClock
    public let directory: CredentialDirectory
    public let metrics: HeraldMetrics
    public let metricsRegistry: PrometheusCollectorRegistry
    /// Which devices are connected to this node.
    public let devices: DeviceRegistry
    public let gateway: DeviceGateway
    /// Expands topic, condition and device-group sends.
    public let fanouts: FanoutEngine
    public let environment: HTTPEnvironment
    /// The store's secret that access and installation tokens are signed with.
    public static let signingSecretName = "access-token-hmac"
    /// The rate limits, shared with other nodes through the store when it is a cluster store.
    public let quotas: Quotas
    let logger: Logger

    /// Builds a node over a store; nothing listens until `run()`.
    public init(
        configuration: ServerConfiguration, store: any HeraldStore, clock: any HeraldClock = SystemClock(),
        logger: Logger
    ) async throws {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.logger = logger
        let metricsRegistry = PrometheusCollectorRegistry()
        self.metricsRegistry = metricsRegistry
        metrics = HeraldMetrics(factory: PrometheusMetricsFactory(registry: metricsRegistry))
        directory = CredentialDirectory(store: store, clock: clock)
        devices = DeviceRegistry()
        try await directory.reload(from: store, force: true)
        if let cluster = store as? any ClusterStore {
            try await NodeIdentity.ensureUnclaimed(
                cluster, deadAfterMilliseconds: configuration.cluster.deadAfterMilliseconds, clock: clock,
                logger: logger)
            // Claims left from this node's previous run: its connections are gone.
            _ = try await cluster.releaseNode(cluster.nodeID)
        }
        let secret = try await SecretRotation.load(named: Self.signingSecretName, from: store) {
            SecureRandom.bytes(32)
        }
        let directory = directory
        let quotas = Quotas(metrics: metrics)
        self.quotas = quotas
        gateway = try DeviceGateway(
            configuration: configuration.effectiveGateway, store: store, devices: devices, clock: clock,
            metrics: metrics,
            collapsibleThrottle: { message, now in
                guard let project = directory.project(named: message.projectID) else { return nil }
                return quotas.takeCollapsible(token: message.token, settings: project.settings, now: now)
            }, logger: logger)
        fanouts = FanoutEngine(
            store: store, clock: clock, metrics: metrics, registry: devices,
            projects: { directory.project(named: $0) }, logger: logger)
        environment = HTTPEnvironment(
            store: store, directory: directory, tokens: AccessTokens(rotation: secret),
            dispatcher: Dispatcher(
                store: store, clock: clock, metrics: metrics, registry: devices, fanouts: fanouts, quotas: quotas,
                acknowledgementWait: configuration.acknowledgementWait, logger: logger),
            quotas: quotas, sends: ConcurrencyGate(limit: configuration.maximumConcurrentSends),
            clock: clock, metrics: metrics, logger: logger,
            renderMetrics: { metricsRegistry.emitToString() },
            metricsAccess: .forListening(on: configuration.httpHost, token: configuration.metricsToken),
            deviceRequestLimits: configuration.deviceRequestLimits)
    }

    /// Opens the configured store: PostgreSQL when `storeURL` names one, otherwise the
    /// embedded SQLite store in the data directory.
    public static func openStore(_ configuration: ServerConfiguration, logger: Logger) async throws -> any HeraldStore {
        guard let url = configuration.storeURL else {
            return try SQLiteStore(dataDirectory: configuration.dataDirectory)
        }
        guard let location = PostgresStore.Location(url: url) else {
            throw PostgresStore.Failure(description: "not a postgres:// URL: \(url)")
        }
        return try await PostgresStore.open(
            location, nodeID: configuration.nodeID,
            nodeAddress: NodeIdentity.address(httpHost: configuration.httpHost, httpPort: configuration.httpPort),
            logger: logger, connections: configuration.databaseConnections)
    }

    /// The Hummingbird application serving every HTTP route.
    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        let headTimeout = configuration.httpHeadTimeoutSeconds
        let bodyTimeout = configuration.httpBodyTimeoutSeconds
        let environment = environment
        return Application(
            router: HeraldRouter.make(environment),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        RequestDeadline(
                            headTimeout: .nanoseconds(Int64(headTimeout * 1e9)),
                            bodyTimeout: .nanoseconds(Int64(bodyTimeout * 1e9))),
                        QuotaRefusalHandler(environment: environment),
                    ])),
            configuration: .init(
                address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "Herald"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Runs until SIGINT or SIGTERM (or cancellation), then shuts down gracefully.
    /// `onRunning` is called once with the HTTP port and the gateway ports.
    public func run(onRunning: @escaping @Sendable (_ httpPort: Int, _ gatewayPorts: [Int]) async -> Void = { _, _ in })
        async throws
    {
        let ready = ReadyLatch(onRunning)
        var services: [any Service] = [
            LaneService(makeApplication { port in await ready.http(port) }, lane: environment.lanes.first),
            GatewayService(gateway: gateway) { ports in await ready.gateway(ports) },
            CredentialRefresher(directory: directory, tokens: environment.tokens, store: store, logger: logger),
            FanoutService(engine: fanouts),
            ExpirySweeper(
                store: store, clock: clock, intervalSeconds: configuration.sweepIntervalSeconds,
                abandonedAfterSeconds: configuration.abandonedCheckinSeconds, logger: logger),
        ]
        if let sqlite = store as? SQLiteStore { services.append(LogCheckpointer(store: sqlite, logger: logger)) }
        if let cluster = store as? any ClusterStore {
            services.append(
                ClusterService(
                    store: cluster, devices: devices, quotas: quotas, fanouts: fanouts, clock: clock,
                    timing: configuration.cluster, logger: logger))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}

/// Calls back once both the HTTP server and the gateway listen.
actor ReadyLatch {
    private let callback: @Sendable (Int, [Int]) async -> Void
    private var httpPort: Int?
    private var gatewayPorts: [Int]?

    init(_ callback: @escaping @Sendable (Int, [Int]) async -> Void) {
        self.callback = callback
    }

    func http(_ port: Int) async {
        httpPort = port
        await fireIfReady()
    }

    func gateway(_ ports: [Int]) async {
        gatewayPorts = ports
        await fireIfReady()
    }

    private func fireIfReady() async {
        guard let httpPort, let gatewayPorts else { return }
        self.gatewayPorts = nil
        await callback(httpPort, gatewayPorts)
    }
}

/// Moves the SQLite write-ahead log into the database file in the background, a few
/// times a second, so that writers (a fanout above all) do not checkpoint in a transaction.
struct LogCheckpointer: Service {
    let store: SQLiteStore
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await store.checkpoint()
                } catch is CancellationError {
                    // Shutting down.
                    return
                } catch {
                    logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}

/// Runs the device gateway until graceful shutdown.
struct GatewayService: Service {
    let gateway: DeviceGateway
    let onListening: @Sendable ([Int]) async -> Void

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await gateway.run(onListening: onListening)
            }
        } catch is CancellationError {
            // Shutting down: the listeners and connections are closed.
        }
    }
}

/// Runs a service's tasks in a lane of `RequestLanes`: the HTTP server's in the first
/// lane, so that an overloaded project's accepted sends, moved to the later lane, wait
/// behind other projects' requests. Only the HTTP server runs there: a task with a
/// preferred executor hops to and from every actor through that executor's queue, where
/// the other services' tasks would switch on the thread they run on.
struct LaneService<Inner: Service>: Service {
    let inner: Inner
    let lane: LaneExecutor

    init(_ inner: Inner, lane: LaneExecutor) {
        self.inner = inner
        self.lane = lane
    }

    func run() async throws {
        try await withTaskExecutorPreference(lane) { try await inner.run() }
    }
}

/// Runs the fanout engine until graceful shutdown; unfinished fanouts resume on the next start.
struct FanoutService: Service {
    let engine: FanoutEngine

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await engine.run() }
        } catch is CancellationError {}
    }
}

/// Deletes queued messages whose time to live has passed, counting them expired
/// (SEMANTICS D5). Expired messages are never delivered even before the sweep: queue
/// reads leave them out.
public struct ExpirySweeper: Service {
    let store: any HeraldStore
    let clock: any HeraldClock
    let intervalSeconds: Int
    let abandonedAfterSeconds: Int64
    let logger: Logger

    public init(
        store: any HeraldStore, clock: any HeraldClock, intervalSeconds: Int, abandonedAfterSeconds: Int64 = 86_400,
        logger: Logger
    ) {
        self.store = store
        self.clock = clock
        self.intervalSeconds = intervalSeconds
        self.abandonedAfterSeconds = abandonedAfterSeconds
        self.logger = logger
    }

    /// Sweeps until nothing expired is left; answers how many entries were deleted.
    @discardableResult
    public func sweep() async throws -> Int {
        var total = 0
        while true {
            let deleted = try await store.deleteExpired(now: clock.now(), limit: 1000)
            total += deleted
            if deleted < 1000 { return total }
        }
    }

    /// Removes devices that checked in `abandonedAfterSeconds` ago or earlier and never
    /// registered nor connected (check-ins need no credentials, so they must not pile up).
    @discardableResult
    public func sweepAbandonedDevices() async throws -> Int {
        var total = 0
        let cutoff = clock.now().adding(seconds: -abandonedAfterSeconds)
        while true {
            let deleted = try await store.deleteAbandonedDevices(checkedInBefore: cutoff, limit: 1000)
            total += deleted
            if deleted < 1000 { return total }
        }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let deleted = try await sweep()
                    if deleted > 0 { logger.debug("expired messages removed", metadata: ["count": "\(deleted)"]) }
                    let abandoned = try await sweepAbandonedDevices()
                    if abandoned > 0 { logger.info("abandoned check-ins removed", metadata: ["count": "\(abandoned)"]) }
                } catch {
                    logger.warning("expiry sweep failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(intervalSeconds))
            }
        }
    }
}

/// Reloads the credential cache and the token-signing secret when the store's credentials
/// change, once a second.
struct CredentialRefresher: Service {
    let directory: CredentialDirectory
    let tokens: AccessTokens
    let store: any HeraldStore
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    if try await directory.reload(from: store) {
                        tokens.use(
                            try await SecretRotation.load(named: HeraldNode.signingSecretName, from: store) {
                                SecureRandom.bytes(32)
                            })
                        logger.info("credentials reloaded")
                    }
                } catch is CancellationError {
                    // Shutting down.
                    return
                } catch {
                    logger.warning("credential reload failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
