public import HeraldCore
public import HeraldStorage
public import HeraldTelemetry
public import Logging
public import ServiceLifecycle
import Synchronization

/// Hands the queued messages of app instances reached through another push service to it:
/// Apple's app instances to APNs (SEMANTICS A1–A4, `APNsHandOffs`), tokens Herald did not
/// issue to FCM (R1–R6, `FCMHandOffs`), web registrations at a browser's own push service to
/// it (W1–W5, `WebPushHandOffs`). It claims due entries from the store, has each
/// service's part send them, and settles each entry by the answer: delivered entries are
/// acknowledged (and counted as FCM's Data API counts hand-offs), gone app instances
/// unregistered, the rest put back for later. An entry stays queued until the other
/// service takes it, so a crash loses nothing.
public final class HandOffForwarder: Service, Sendable {
    public struct Configuration: Sendable {
        /// APNs' base URLs for each environment.
        public var productionURL: String
        public var developmentURL: String
        /// FCM's base URL, where `/v1/projects/{project}/messages:send` is.
        public var fcmURL: String
        /// Files of extra CA certificates to trust for the TLS to APNs, FCM and browsers' push services.
        public var trustRoots: [String]
        /// The contact the VAPID JWTs name (`sub`): a `mailto:` or `https:` URL.
        public var webPushContact: String
        /// The address a browser push service's origin may be reached at, checked each time a
        /// connection to it is made as webhook targets are (SEMANTICS W1); throws to refuse it.
        public var webPushAddress: @Sendable (String) throws -> String = { _ in
            throw CheckRefused(reason: "no address policy")
        }
        /// Entries claimed at once.
        public var batchSize: Int
        /// How long a claim holds its entries.
        public var claimSeconds: Int64
        /// The least time between two looks while entries keep coming; how often a store that
        /// gives no signal is looked at.
        public var idleWait: Duration

        public static let appleProductionURL = "https://api.push.apple.com"
        public static let appleDevelopmentURL = "https://api.sandbox.push.apple.com"
        public static let googleFCMURL = "https://fcm.googleapis.com"
        public static let defaultWebPushContact = "mailto:webpush@herald.invalid"

        public init(
            productionURL: String = appleProductionURL, developmentURL: String = appleDevelopmentURL,
            fcmURL: String = googleFCMURL, trustRoots: [String] = [], webPushContact: String = defaultWebPushContact,
            batchSize: Int = 500, claimSeconds: Int64 = 30, idleWait: Duration = .milliseconds(100)
        ) {
            self.webPushContact = webPushContact
            self.productionURL = productionURL
            self.developmentURL = developmentURL
            self.fcmURL = fcmURL
            self.trustRoots = trustRoots
            self.batchSize = batchSize
            self.claimSeconds = claimSeconds
            self.idleWait = idleWait
        }
    }

    /// Why a push service's address is refused.
    public struct CheckRefused: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }

        public init(reason: String) { self.reason = reason }
    }

    public typealias Store = HandOffStore & QueueStore & RegistrationStore & APNsCredentialStore
        & FCMRelayCredentialStore & WebPushKeyStore & StatsStore

    let configuration: Configuration
    private let store: any Store
    /// Wakes the forwarder when entries are queued; nil for a store that does not tell.
    private let work: WorkSignals?
    /// The earliest time an entry this node put back falls due again.
    private let nextDeferred = Mutex<Timestamp?>(nil)
    private let clock: any HeraldClock
    private let logger: Logger
    private let apns: APNsHandOffs
    private let fcm: FCMHandOffs
    private let webPush: WebPushHandOffs

    public init(
        configuration: Configuration, store: any Store, work: WorkSignals? = nil, clock: any HeraldClock,
        metrics: HeraldMetrics, logger: Logger, errors: ErrorLog
    ) {
        self.configuration = configuration
        self.store = store
        self.work = work
        self.clock = clock
        self.logger = logger
        let environment = HandOffEnvironment(
            configuration: configuration, store: store, clock: clock, metrics: metrics, logger: logger,
            errors: errors)
        apns = APNsHandOffs(environment: environment)
        fcm = FCMHandOffs(environment: environment)
        webPush = WebPushHandOffs(environment: environment)
    }

    /// Hands off what is due, then waits until entries are queued (`WorkSignals`), one it
    /// put back falls due, or `WorkWaiter.defaultFallback` passes.
    public func run() async throws {
        var waiter = WorkWaiter(
            .handOffs, of: work, pace: configuration.idleWait, polling: configuration.idleWait)
        // A graceful shutdown ends the wait, not a batch under way.
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                let mark = waiter.mark()
                let handled: Int
                do {
                    handled = try await forwardDue()
                } catch {
                    logger.error("hand-off failed", metadata: ["error": "\(error)"])
                    handled = 0
                }
                if handled == 0 { await waiter.wait(after: mark, dueIn: deferredDueIn()) }
            }
        } onGracefulShutdown: { [work] in
            work?[.handOffs].wake()
        }
        await apns.shutdown()
        await fcm.shutdown()
        await webPush.shutdown()
    }

    /// How long until the earliest entry this node put back falls due; nil for none.
    private func deferredDueIn() -> Duration? {
        let now = clock.now()
        return nextDeferred.withLock { next in
            guard let due = next else { return nil }
            if due <= now { next = nil }
            return .milliseconds(max(0, due.milliseconds - now.milliseconds))
        }
    }

    /// Hands off one batch of due entries; answers how many there were.
    @discardableResult
    public func forwardDue() async throws -> Int {
        let now = clock.now()
        let claimed = try await store.claimHandOffs(
            limit: configuration.batchSize, now: now, until: now.adding(seconds: configuration.claimSeconds))
        guard !claimed.isEmpty else { return 0 }
        var toAPNs: [APNsHandOffs.PoolKey: [HandOff]] = [:]
        var toFCM: [String: [HandOff]] = [:]
        var toWebPush: [WebPushHandOffs.PoolKey: [HandOff]] = [:]
        for handOff in claimed {
            switch handOff.destination {
            case .apns(let address):
                let key = APNsHandOffs.PoolKey(projectID: handOff.entry.projectID, isSandbox: address.isSandbox)
                toAPNs[key, default: []].append(handOff)
            case .fcm:
                toFCM[handOff.entry.projectID, default: []].append(handOff)
            case .webPush(let endpoint):
                let key = WebPushHandOffs.PoolKey(projectID: handOff.entry.projectID, origin: WebOrigin.of(endpoint))
                toWebPush[key, default: []].append(handOff)
            }
        }
        let outcome = await withTaskGroup(of: HandOffOutcome.self) { group in
            for (key, handOffs) in toAPNs { group.addTask { await self.apns.forward(handOffs, key: key, now: now) } }
            for (projectID, handOffs) in toFCM {
                group.addTask { await self.fcm.forward(handOffs, projectID: projectID, now: now) }
            }
            for (key, handOffs) in toWebPush {
                group.addTask { await self.webPush.forward(handOffs, key: key, now: now) }
            }
            var all = HandOffOutcome()
            for await part in group { all.merge(part) }
            return all
        }
        try await settle(outcome, now: now)
        return claimed.count
    }

    /// Writes what became of a batch.
    private func settle(_ outcome: HandOffOutcome, now: Timestamp) async throws {
        if !outcome.delivered.isEmpty { _ = try await store.acknowledge(batch: outcome.delivered) }
        for token in outcome.unregistered { _ = try await store.deleteRegistration(token: token, at: now) }
        // A message the other service refused for good is withdrawn; its `dropped` event says why.
        var refused: [DeliveryStat] = []
        for entry in outcome.dropped
        where try await store.withdraw(androidID: entry.androidID, persistentID: entry.persistentID) {
            refused.append(entry.stat(.droppedRefused))
        }
        if !refused.isEmpty { try await store.record(refused) }
        for (at, sequences) in outcome.deferred {
            try await store.deferHandOffs(sequences, to: at)
            nextDeferred.withLock { $0 = min($0 ?? at, at) }
        }
    }

}
