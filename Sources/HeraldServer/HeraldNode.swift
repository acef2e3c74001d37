import HeraldConsole
public import HeraldCore
public import HeraldDelivery
public import HeraldGateway
public import HeraldHTTP
import HeraldHandOffs
public import HeraldStorage
public import HeraldTelemetry
import HeraldWebhooks
public import HeraldXMPP
public import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
public import Prometheus
public import ServiceLifecycle

/// One Herald process: the store, the credential cache, the dispatcher, the HTTP
/// surfaces and the device gateway, run as one `ServiceGroup` that shuts down gracefully
/// on SIGINT or SIGTERM.
public struct HeraldNode: Sendable {
    public let configuration: ServerConfiguration
    public let store: any HeraldStore
    /// The nodes sharing the store: `SingleNodeCluster` unless the store is PostgreSQL.
    public let cluster: any Cluster
    /// What the store needs done in the background while the node runs.
    let maintenance: [any Service]
    public let clock: any HeraldClock
    public let directory: CredentialDirectory
    public let metrics: HeraldMetrics
    public let metricsRegistry: PrometheusCollectorRegistry
    /// Which devices are connected to this node.
    public let devices: DeliveryPath
    public let gateway: DeviceGateway
    /// The XMPP connection server, when configured.
    public let xmpp: XMPPGateway?
    /// Where devices' upstream messages go.
    public let upstream: UpstreamIntake
    /// Expands topic, condition and device-group sends.
    public let fanouts: FanoutEngine
    public let environment: HTTPEnvironment
    /// The store's secret that access and installation tokens are signed with.
    public static let signingSecretName = "access-token-hmac"
    /// The rate limits, shared with other nodes through the store when it is a cluster store.
    public let quotas: Quotas
    /// Bounds the connections not yet authenticated, on every listener.
    public let admission: ConnectionAdmission
    /// Devices to signal to the nodes holding them, when several share the store.
    let outbox: Outbox?
    /// Mozilla's push protocol (Firefox, Sunup), when a project is named for it.
    let mozillaPush: MozillaPushService?
    let logger: Logger

    /// Builds a node over a store; nothing listens until `run()`.
    public init(
        configuration: ServerConfiguration, store: any HeraldStore, cluster: any Cluster = SingleNodeCluster(),
        maintenance: [any Service] = [], clock: any HeraldClock = SystemClock(), logger: Logger
    ) async throws {
        self.configuration = configuration
        self.store = store
        self.cluster = cluster
        self.maintenance = maintenance
        self.clock = clock
        self.logger = logger
        let metricsRegistry = PrometheusCollectorRegistry()
        self.metricsRegistry = metricsRegistry
        metrics = HeraldMetrics(factory: PrometheusMetricsFactory(registry: metricsRegistry))
        directory = CredentialDirectory(store: store, clock: clock)
        try await directory.reload(from: store, force: true)
        if cluster.isShared {
            try await NodeIdentity.ensureUnclaimed(
                cluster, deadAfterMilliseconds: configuration.cluster.deadAfterMilliseconds, clock: clock,
                logger: logger)
            // Claims left from this node's previous run: its connections are gone.
            _ = try await cluster.releaseNode(cluster.nodeID)
        }
        let secret = try await SecretRotation.load(named: Self.signingSecretName, from: store) {
            SecureRandom.bytes(32)
        }
        let eventIDs = try await EventIDs.load(from: store)
        let directory = directory
        let quotas = Quotas(metrics: metrics)
        self.quotas = quotas
        let metrics = metrics
        let admission = ConnectionAdmission(limits: configuration.connectionAdmission) { refusal in
            metrics.increment("herald_connections_refused_total", [("reason", refusal.rawValue)])
        }
        self.admission = admission
        let receiptSignal = PushReceiptSignal()
        let acknowledgements = AcknowledgementBatcher(
            store: store, metrics: metrics, receiptSignal: receiptSignal, logger: logger)
        // With several nodes, devices that got messages but are held by no session here are
        // signalled to the node holding them (`ClusterService`).
        let outbox = cluster.isShared ? Outbox() : nil
        self.outbox = outbox
        var elsewhere: (@Sendable (UInt64) -> Void)?
        if let outbox { elsewhere = { androidID in outbox.add(androidID) } }
        devices = DeliveryPath(acknowledgements: acknowledgements, elsewhere: elsewhere, clock: clock)
        let tls = try DeviceGateway.tlsContext(for: configuration.effectiveGateway)
        fanouts = FanoutEngine(
            store: store, clock: clock, metrics: metrics, path: devices,
            projects: { directory.project(named: $0) }, logger: logger, cluster: cluster)
        let dispatcher = Dispatcher(
            store: store, clock: clock, metrics: metrics, path: devices, fanouts: fanouts, quotas: quotas,
            acknowledgementWait: configuration.acknowledgementWait, cluster: cluster, logger: logger)
        let xmpp =
            configuration.xmpp.isEnabled
            ? XMPPGateway(
                configuration: configuration.xmpp, tls: tls, dispatcher: dispatcher, quotas: quotas,
                upstream: store, nodeID: cluster.nodeID, clock: clock, metrics: metrics, logger: logger,
                admission: admission,
                authenticate: { _, serverKey in await directory.find { $0.project(serverKey: serverKey) } })
            : nil
        self.xmpp = xmpp
        var arrival: UpstreamIntake.Arrival?
        if let xmpp { arrival = { projectID in xmpp.wake(projectID: projectID) } }
        let upstream = UpstreamIntake(
            store: store, path: devices, clock: clock, metrics: metrics,
            projects: { directory.project(named: $0) }, arrival: arrival, logger: logger)
        self.upstream = upstream
        gateway = DeviceGateway(
            configuration: configuration.effectiveGateway, tls: tls, store: store, devices: devices, clock: clock,
            metrics: metrics, acknowledgements: acknowledgements,
            collapsibleThrottle: { message, now in
                guard let project = directory.project(named: message.projectID) else { return nil }
                return quotas.takeCollapsible(token: message.token, settings: project.settings, now: now)
            }, cluster: cluster, upstream: upstream, admission: admission,
            projects: { directory.project(named: $0) }, logger: logger)
        var environment = HTTPEnvironment(
            store: store, directory: directory, tokens: AccessTokens(rotation: secret),
            dispatcher: dispatcher,
            quotas: quotas, sends: ConcurrencyGate(limit: configuration.maximumConcurrentSends),
            clock: clock, metrics: metrics, logger: logger,
            renderMetrics: { [calls = store.calls] in metricsRegistry.emitToString() + calls.exposition },
            metricsAccess: .forListening(
                on: configuration.httpHost, token: configuration.metricsToken,
                openOnLoopback: configuration.metricsWithoutToken),
            eventIDs: eventIDs,
            deviceRequestLimits: configuration.deviceRequestLimits, publicURL: configuration.effectivePublicURL)
        environment.fanouts = fanouts
        environment.webPushServices = configuration.webPushServices
        let webPushTargets = configuration.webhookTargets
        environment.webPushAddressRefusal = { endpoint in
            do throws(WebhookTargetPolicy.Refusal) {
                _ = try webPushTargets.check(endpoint)
                return nil
            } catch {
                return error.description
            }
        }
        if let projectID = configuration.mozillaPushProject {
            guard directory.project(named: projectID) != nil else {
                throw AdministrationError("--mozilla-push-project names no project: \(projectID)")
            }
            mozillaPush = MozillaPushService(
                projectID: projectID, endpointBase: configuration.effectivePublicURL, store: store, clock: clock,
                logger: logger)
        } else {
            mozillaPush = nil
        }
        environment.webPush = WebPushRelay(
            configuration: .init(
                publicURL: configuration.effectivePublicURL, audiences: Set(configuration.webPushAudiences)),
            store: store, path: devices, cluster: cluster, quotas: quotas, clock: clock, metrics: metrics,
            receiptSignal: receiptSignal, acknowledgementWait: configuration.acknowledgementWait, logger: logger)
        self.environment = environment
    }

    /// Runs `body` with the configured store: PostgreSQL (its cluster, its pool running
    /// beside `body`) when `storeURL` names one, otherwise the embedded SQLite store in the
    /// data directory with its log checkpointer.
    public static func withStore<Result>(
        _ configuration: ServerConfiguration, logger: Logger, _ body: (NodeStore) async throws -> Result
    ) async throws -> Result {
        guard let url = configuration.storeURL else {
            // One server per data directory; a restore waits for it to stop.
            try PrivateDirectory.prepare(configuration.dataDirectory)
            let lock = try DataDirectoryLock(dataDirectory: configuration.dataDirectory)
            defer { withExtendedLifetime(lock) {} }
            let store = try SQLiteStore(dataDirectory: configuration.dataDirectory, nodeID: configuration.nodeID)
            return try await body(
                NodeStore(
                    store: store, cluster: SingleNodeCluster(nodeID: configuration.nodeID),
                    maintenance: [LogCheckpointer(store: store, logger: logger)]))
        }
        guard let location = PostgresStore.Location(url: url) else {
            throw PostgresStore.Failure(description: "not a postgres:// URL: \(url)")
        }
        return try await PostgresStore.withStore(
            location, nodeID: configuration.nodeID,
            nodeAddress: NodeIdentity.address(httpHost: configuration.httpHost, httpPort: configuration.httpPort),
            logger: logger, connections: configuration.databaseConnections, listening: true
        ) { store in
            try await body(NodeStore(store: store, cluster: store, maintenance: []))
        }
    }

    /// The Hummingbird application serving every HTTP route.
    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        Application(
            router: router(),
            server: httpServer(),
            configuration: .init(
                address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "Herald"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// HTTP/1.1, and on the same port Mozilla's push protocol when it is served: a
    /// connection whose first request asks for a WebSocket goes to the device gateway
    /// (`HTTPPortChildChannel`).
    private func httpServer() -> HTTPServerBuilder {
        let handlers = requestHandlers
        guard let mozillaPush else {
            return .http1(configuration: .init(additionalChannelHandlers: [admission.makeHandler()] + handlers()))
        }
        let gateway = gateway
        let admission = admission
        return HTTPServerBuilder { responder in
            HTTPPortChildChannel(
                http: HTTP1Channel(responder: responder, configuration: .init(additionalChannelHandlers: handlers())),
                gateway: gateway, service: mozillaPush, admission: admission)
        }
    }

    /// Every HTTP route: the API's and the console's; in drop-in mode, served only under the
    /// host names `dropIn` allows (the console only under the operator's own). Who may read
    /// the metrics is decided by the address this listener is bound to (`listenerHost`).
    func router(dropIn: DropInHosts? = nil, https: Bool = false, listenerHost: String? = nil)
        -> Router<HeraldRequestContext>
    {
        var environment = environment
        environment.metricsAccess = .forListening(
            on: listenerHost ?? configuration.httpHost, token: configuration.metricsToken,
            openOnLoopback: configuration.metricsWithoutToken)
        let router = HeraldRouter.make(environment, dropIn: dropIn)
        ConsoleRoutes(
            environment: environment, secureCookies: https || configuration.effectivePublicURL.hasPrefix("https:"),
            publicURL: configuration.effectivePublicURL
        )
        .register(on: router)
        return router
    }

    /// The handlers each HTTP request passes through before its route: its deadlines, and the
    /// refusal of requests past their project's quota.
    func requestHandlers() -> [any RemovableChannelHandler] {
        [
            RequestDeadline(
                headTimeout: .nanoseconds(Int64(configuration.httpHeadTimeoutSeconds * 1e9)),
                bodyTimeout: .nanoseconds(Int64(configuration.httpBodyTimeoutSeconds * 1e9)),
                shutdown: environment.httpShutdown),
            QuotaRefusalHandler(environment: environment),
        ]
    }

    /// Runs until SIGINT or SIGTERM (or cancellation), then shuts down gracefully.
    /// `onRunning` is called once with the HTTP port and the gateway ports.
    public func run(onRunning: @escaping @Sendable (_ httpPort: Int, _ gatewayPorts: [Int]) async -> Void = { _, _ in })
        async throws
    {
        let ready = ReadyLatch(onRunning)
        // A graceful shutdown stops the services in the reverse of this order, each after the
        // one before has finished: the health check fails for `drainSeconds`, HTTP stops accepting and finishes its in-flight sends, XMPP
        // connections drain (told CONNECTION_DRAINING, answered, closed), the fanout engine ends its page, the gateway writes the last acknowledgements and tells
        // devices to reconnect, then the background work stops and this node leaves the
        // cluster. The store closes after the group (`withStore`).
        var services: [any Service] = []
        // The outbox exists exactly when the store is shared (`init`).
        if let outbox {
            services.append(
                ClusterService(
                    cluster: cluster, work: store.work, devices: devices, outbox: outbox, quotas: quotas,
                    fanouts: fanouts,
                    clock: clock, timing: configuration.cluster, logger: logger))
        }
        services += maintenance
        services += [
            ExpirySweeper(
                store: store, upstream: upstream, clock: clock, intervalSeconds: configuration.sweepIntervalSeconds,
                abandonedAfterSeconds: configuration.abandonedCheckinSeconds,
                eventRetentionDays: configuration.eventRetentionDays, logger: logger),
            CredentialRefresher(
                directory: directory, tokens: environment.tokens, store: store, work: store.work, logger: logger),
            GatewayService(gateway: gateway) { ports in await ready.gateway(ports) },
            FanoutService(engine: fanouts),
            ScheduledSender(
                store: store, work: store.work, sender: environment.consoleSender, directory: directory, clock: clock,
                logger: logger),
            HandOffForwarder(
                configuration: configuration.effectiveHandOffs, store: store, work: store.work, clock: clock,
                metrics: metrics,
                logger: logger, errors: environment.errors),
            ErrorLogService(errors: environment.errors, store: store, logger: logger),
            WebhookSender(
                store: store, policy: configuration.webhookTargets, holder: cluster.nodeID, clock: clock,
                eventIDs: environment.eventIDs, metrics: metrics, logger: logger),
            // Stopped after the HTTP listeners, so their streams end first.
            environment.eventTail,
        ]
        if let xmpp { services.append(XMPPService(gateway: xmpp)) }
        services += [
            LaneService(makeApplication { port in await ready.http(port) }, lane: environment.admission.lanes.first)
        ]
        if let dropIn = configuration.dropIn {
            services.append(LaneService(try makeDropInApplication(dropIn), lane: environment.admission.lanes.first))
        }
        // Stopped after the drain, before the listeners: requests still open then are cut
        // after a grace, so that a client that stalls cannot hold the stop.
        services.append(HTTPShutdownService(shutdown: environment.httpShutdown))
        // Stopped first: the health check fails while everything still serves.
        services.append(DrainService(health: environment.health, seconds: configuration.drainSeconds, logger: logger))
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}
