public import HeraldCore
public import HeraldDelivery
public import HeraldStorage
public import HeraldTelemetry
public import Logging

/// What the server makes once for its HTTP listeners, and from which `HeraldRouter` gives
/// each route family the parts it uses, the store as the roles it uses.
public struct HTTPEnvironment: Sendable {
    public var store: any HeraldStore
    public var directory: CredentialDirectory
    public var authenticator: Authenticator
    public var tokens: AccessTokens
    public var dispatcher: Dispatcher
    /// The overload gate, the downstream quota (T1) and the lanes of every send.
    public var admission: DownstreamAdmission
    public var clock: any HeraldClock
    public var metrics: HeraldMetrics
    public var logger: Logger
    /// Renders the Prometheus text exposition for `GET /metrics`.
    public var renderMetrics: @Sendable () -> String
    /// Bounds what one address or device may ask of the unauthenticated device endpoints.
    public var deviceRequests: DeviceRequestLimiter
    /// Who may read `GET /metrics`.
    public var metricsAccess: MetricsAccess
    /// The push service for push channels (RFC 8030); without it their endpoints answer 404.
    public var webPush: WebPushRelay?
    /// The fanout engine, whose jobs the console shows (T3).
    public var fanouts: FanoutEngine?
    /// The errors each project was answered with, until they are flushed to the store.
    public let errors = ErrorLog()
    /// What the health check answers (draining once the node began to stop).
    public let health = NodeHealth()
    /// The event streams open on the node, by project and credential, over every listener.
    public let eventStreams = EventStreamSlots()
    /// The node's one reader of new events for every open event stream; a service of the node.
    public let eventTail: EventTail
    /// Closes the node's HTTP connections at the end of the stop's grace.
    public let httpShutdown = HTTPShutdown()
    /// Password checks running at once on the node (console sign-in): each takes a core for
    /// a quarter of a second, so more at once only make every answer slower.
    public let passwordChecks = ConcurrencyGate(limit: 2)
    /// The ids events are given outside the store (SEMANTICS E4).
    public var eventIDs: EventIDs
    /// The browsers' push services web registrations may name (SEMANTICS W1).
    public var webPushServices = WebPushServices()
    /// Why an endpoint at one of them may not be reached; the node checks its addresses as
    /// webhook targets are checked. Until it is given, every one is refused.
    public var webPushAddressRefusal: @Sendable (String) -> String? = { _ in "no address policy" }

    public init(
        store: any HeraldStore, directory: CredentialDirectory, tokens: AccessTokens, dispatcher: Dispatcher,
        quotas: Quotas, sends: ConcurrencyGate, clock: any HeraldClock, metrics: HeraldMetrics, logger: Logger,
        renderMetrics: @escaping @Sendable () -> String, metricsAccess: MetricsAccess = .closed,
        eventIDs: EventIDs,
        deviceRequestLimits: DeviceRequestLimiter.Limits = .init(), lanes: RequestLanes = .shared,
        publicURL: String? = nil
    ) {
        self.deviceRequests = DeviceRequestLimiter(limits: deviceRequestLimits, clock: clock)
        self.eventTail = EventTail(store: store, clock: clock)
        self.metricsAccess = metricsAccess
        self.eventIDs = eventIDs
        self.admission = DownstreamAdmission(quotas: quotas, sends: sends, lanes: lanes, clock: clock, metrics: metrics)
        self.store = store
        self.directory = directory
        self.authenticator = Authenticator(directory: directory, tokens: tokens, clock: clock, publicURL: publicURL)
        self.tokens = tokens
        self.dispatcher = dispatcher
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.renderMetrics = renderMetrics
    }

    /// The rate limits of SEMANTICS T1–T6, shared with the dispatcher.
    public var quotas: Quotas { admission.quotas }

    /// What the endpoints app instances register through use.
    public var registration: RegistrationEnvironment {
        RegistrationEnvironment(
            store: store, directory: directory, authenticator: authenticator, tokens: tokens, quotas: quotas,
            deviceRequests: deviceRequests, clock: clock, metrics: metrics, logger: logger,
            webPushServices: webPushServices, webPushAddressRefusal: webPushAddressRefusal)
    }
}
