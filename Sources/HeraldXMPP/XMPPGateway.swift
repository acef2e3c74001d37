public import HeraldCore
public import HeraldDelivery
public import HeraldGateway
public import HeraldStorage
public import HeraldTelemetry
public import Logging
import NIOCore
public import NIOSSL
import Synchronization

/// The XMPP connection server for app servers (reference §6): TLS from the first byte on
/// `tlsPorts` (FCM's 5235), plain TCP on `plaintextPorts` for a TLS-terminating balancer
/// (like FCM's 5236). Each connection runs an `XMPPSession`; its downstream messages go to
/// the same dispatcher as a v1 send, under the project's downstream quota.
public final class XMPPGateway: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var tlsPorts: [Int] = []
        public var plaintextPorts: [Int] = []
        /// How long a connection may take to authenticate and bind.
        public var authenticationTimeoutSeconds = 10
        /// How long a draining connection may take to receive its last answers.
        public var drainSeconds = 10
        /// How long a connection holds the upstream messages it sent before, unacknowledged,
        /// they go to any connection again.
        public var upstreamLeaseSeconds: Int64 = 30
        /// How often a connection with room looks for upstream messages kept by other nodes
        /// (those kept here are announced at once).
        public var upstreamPollMilliseconds: Int64 = 250

        public init() {}

        public var isEnabled: Bool { !tlsPorts.isEmpty || !plaintextPorts.isEmpty }
    }

    /// The project whose sender id and server key these are, if any.
    public typealias Authenticate = @Sendable (_ senderID: Int64, _ serverKey: String) async -> Project?

    let configuration: Configuration
    private let tls: NIOSSLContext?
    /// Bounds connections that have not authenticated yet.
    private let admission: ConnectionAdmission?
    let dispatcher: Dispatcher
    let quotas: Quotas
    let authenticate: Authenticate
    /// Where upstream messages and receipts wait for app servers.
    let upstream: any UpstreamStore
    /// The start of the lease holder names of this node's connections.
    let holderPrefix: String
    let limits = XMPPConnectionLimits()
    let clock: any HeraldClock
    let metrics: HeraldMetrics
    let logger: Logger
    let work = WorkQueue()
    private let listeners: Mutex<[any Channel]> = Mutex([])
    private let connections: Mutex<[UInt64: NIOLoopBound<XMPPConnectionHandler>]> = Mutex([:])
    /// The established connections of each project, which upstream arrivals wake.
    private let established: Mutex<[String: [UInt64: NIOLoopBound<XMPPConnectionHandler>]]> = Mutex([:])
    private let nextConnection = Atomic<UInt64>(0)
    private let (stopping, stopSignal) = AsyncStream.makeStream(of: Void.self)

    public init(
        configuration: Configuration, tls: NIOSSLContext?, dispatcher: Dispatcher, quotas: Quotas,
        upstream: any UpstreamStore, nodeID: String, clock: any HeraldClock, metrics: HeraldMetrics, logger: Logger,
        admission: ConnectionAdmission? = nil, authenticate: @escaping Authenticate
    ) {
        self.configuration = configuration
        self.upstream = upstream
        self.holderPrefix = nodeID + "/"
        self.tls = tls
        self.dispatcher = dispatcher
        self.quotas = quotas
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.authenticate = authenticate
        self.admission = admission
    }

    /// Listens until `stop()`, then waits for the draining connections (at most
    /// `drainSeconds`) and for the work they handed over.
    public func run(onListening: @escaping @Sendable ([Int]) async -> Void = { _ in }) async throws {
        // Leases this node's connections held before a restart end now, not when they run out.
        try await upstream.releaseUpstream(holderPrefix: holderPrefix)
        var bound: [any Channel] = []
        for port in configuration.tlsPorts { bound.append(try await bind(port: port, tls: tls)) }
        for port in configuration.plaintextPorts { bound.append(try await bind(port: port, tls: nil)) }
        listeners.withLock { $0 = bound }
        let ports = bound.compactMap { $0.localAddress?.port }
        logger.info("XMPP connection server listening", metadata: ["ports": "\(ports)"])
        await onListening(ports)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.work.run() }
            group.addTask {
                await withTaskCancellationHandler {
                    for await _ in self.stopping {}
                } onCancel: {
                    self.stop()
                }
                await self.waitForDrainedConnections()
                self.work.finish()
            }
        }
    }

    /// Stops taking connections and drains the open ones.
    public func stop() {
        for listener in listeners.withLock({ $0 }) { listener.close(promise: nil) }
        for handler in connections.withLock({ Array($0.values) }) {
            handler.eventLoop.execute { handler.value.drain() }
        }
        stopSignal.finish()
    }

    /// The connections open now.
    public var connectionCount: Int { connections.withLock { $0.count } }

    private func waitForDrainedConnections() async {
        let deadline = ContinuousClock.now + .seconds(configuration.drainSeconds + 1)
        while connectionCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private func bind(port: Int, tls: NIOSSLContext?) async throws -> any Channel {
        try await TLSListener.bind(
            host: configuration.host, port: port, tls: tls, backlog: 256, admission: admission
        ) { pipeline in
            try pipeline.addHandler(XMPPConnectionHandler(gateway: self))
        }
    }

    func register(_ handler: NIOLoopBound<XMPPConnectionHandler>) -> UInt64 {
        let id = nextConnection.add(1, ordering: .relaxed).newValue
        connections.withLock { $0[id] = handler }
        metrics.increment("herald_xmpp_connections_total")
        return id
    }

    func unregister(_ id: UInt64, projectID: String?) {
        _ = connections.withLock { $0.removeValue(forKey: id) }
        if let projectID {
            established.withLock { established in
                established[projectID]?[id] = nil
                if established[projectID]?.isEmpty == true { established[projectID] = nil }
            }
        }
    }

    /// A connection of `projectID` is established: upstream arrivals wake it from now on.
    func joined(_ id: UInt64, projectID: String, handler: NIOLoopBound<XMPPConnectionHandler>) {
        established.withLock { $0[projectID, default: [:]][id] = handler }
    }

    /// Upstream messages of `projectID` were kept on this node: its connections here look for them.
    public func wake(projectID: String) {
        for handler in established.withLock({ Array(($0[projectID] ?? [:]).values) }) {
            handler.eventLoop.execute { handler.value.pullUpstream() }
        }
    }

    /// Checks an app server's credentials and its project's connection limits (SEMANTICS T5).
    func admit(senderID: Int64, serverKey: String) async -> (XMPPSession.Authentication, Project?) {
        guard let project = await authenticate(senderID, serverKey), project.number == senderID else {
            metrics.increment("herald_xmpp_authentication_failures_total")
            return (.refused, nil)
        }
        guard limits.admit(project, now: clock.now()) else {
            metrics.increment("herald_quota_rejections_total", [("quota", "xmpp-connections")])
            return (.overLimit, nil)
        }
        return (.accepted, project)
    }

    /// Accepts one downstream message as a v1 send (SEMANTICS T1 counted); the error a
    /// `nack` names, or nil for an `ack`.
    func accept(_ message: XMPPDownstream, project: Project) async -> HeraldError? {
        let admittedAt = clock.now()
        do {
            try quotas.admitDownstream(project, now: admittedAt)
        } catch {
            return error
        }
        do {
            let v1 = try message.request.message(to: message.target, limits: project.settings.message)
            _ = try await dispatcher.send(
                SendRequest(message: v1, validateOnly: message.request.dryRun), project: project,
                receiptID: message.receiptRequested ? message.messageID : "")
            metrics.increment("herald_xmpp_messages_total", [("project", project.id)])
            return nil
        } catch let error as HeraldError {
            if error.canonicalStatus.httpStatus >= 429 {
                quotas.refundDownstream(projectID: project.id, at: admittedAt)
            }
            return error
        } catch {
            quotas.refundDownstream(projectID: project.id, at: admittedAt)
            logger.error("XMPP downstream message failed", metadata: ["error": "\(error)"])
            return .internal()
        }
    }
}
