public import HeraldCore
public import HeraldDelivery
public import HeraldHTTP
public import HeraldStorage
public import Hummingbird
public import Logging
public import Prometheus
import ServiceLifecycle

/// One Herald process: the store, the credential cache, the dispatcher and the HTTP
/// surfaces, run as one `ServiceGroup` that shuts down gracefully on SIGINT or SIGTERM.
public struct HeraldNode: Sendable {
    public let configuration: ServerConfiguration
    public let store: any HeraldStore
    public let clock: any HeraldClock
    public let directory: CredentialDirectory
    public let metrics: HeraldMetrics
    public let registry: PrometheusCollectorRegistry
    let environment: HTTPEnvironment
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
        registry = PrometheusCollectorRegistry()
        metrics = HeraldMetrics(factory: PrometheusMetricsFactory(registry: registry))
        directory = CredentialDirectory()
        try await directory.reload(from: store, force: true)
        let secret = try await store.secret(named: "access-token-hmac") { SecureRandom.bytes(32) }
        let registry = registry
        environment = HTTPEnvironment(
            store: store, directory: directory, tokens: AccessTokens(secret: secret),
            dispatcher: Dispatcher(store: store, clock: clock, metrics: metrics, logger: logger),
            clock: clock, metrics: metrics, logger: logger,
            renderMetrics: { registry.emitToString() })
    }

    /// Opens the embedded SQLite store in the configured data directory.
    public static func openStore(_ configuration: ServerConfiguration) throws -> any HeraldStore {
        try SQLiteStore(dataDirectory: configuration.dataDirectory)
    }

    /// The Hummingbird application serving every HTTP route.
    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        Application(
            router: HeraldRouter.make(environment),
            configuration: .init(
                address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "Herald"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Runs until SIGINT or SIGTERM (or cancellation), then shuts down gracefully.
    public func run(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    makeApplication(onServerRunning: onServerRunning),
                    CredentialRefresher(directory: directory, store: store, logger: logger),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}

/// Reloads the credential cache when the store's credentials change, once a second.
struct CredentialRefresher: Service {
    let directory: CredentialDirectory
    let store: any HeraldStore
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    if try await directory.reload(from: store) {
                        logger.info("credentials reloaded")
                    }
                } catch {
                    logger.warning("credential reload failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
