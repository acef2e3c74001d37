import HeraldCore
import HeraldDelivery
import HeraldStorage
import Logging
public import ServiceLifecycle
import Synchronization

/// What makes several nodes over one shared store act as one Herald: it signals the node
/// holding a device when this node stored messages for it, wakes local devices when
/// another node signals, exchanges quota counts, and takes over the claims of nodes that
/// stopped answering.
public struct ClusterService: Service {
    /// How the service paces itself.
    public struct Timing: Sendable {
        /// Between two heartbeats of this node.
        public var heartbeat: Duration = .seconds(1)
        /// A node silent this long is taken for dead.
        public var deadAfterMilliseconds: Int64 = 5_000
        /// Between two quota exchanges (a quota may be exceeded by what other nodes accept
        /// in this time).
        public var quotaExchange: Duration = .milliseconds(200)
        /// Between two quota exchanges while this node counts no send.
        public var quietQuotaExchange: Duration = .seconds(5)
        /// How long device signals are gathered, once one is waiting, before they are sent.
        public var signalDelay: Duration = .milliseconds(1)
        /// How long signals that could not be sent wait before they are tried again.
        public var signalRetry: Duration = .milliseconds(500)

        public init() {}
    }

    let cluster: any Cluster
    /// Wakes the quota exchange when another node publishes its counts.
    let work: WorkSignals?
    let devices: DeliveryPath
    let quotas: Quotas
    let fanouts: FanoutEngine
    let clock: any HeraldClock
    let timing: Timing
    let logger: Logger
    private let outbox: Outbox

    init(
        cluster: any Cluster, work: WorkSignals? = nil, devices: DeliveryPath, outbox: Outbox, quotas: Quotas,
        fanouts: FanoutEngine, clock: any HeraldClock, timing: Timing = Timing(), logger: Logger
    ) {
        self.cluster = cluster
        self.work = work
        self.devices = devices
        self.quotas = quotas
        self.fanouts = fanouts
        self.clock = clock
        self.timing = timing
        self.logger = logger
        self.outbox = outbox
    }

    public func run() async throws {
        let joinedAt = clock.now()
        _ = try await cluster.heartbeat(now: joinedAt, deadAfterMilliseconds: timing.deadAfterMilliseconds)
        logger.info("joined the cluster", metadata: ["node": "\(cluster.nodeID)"])
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.listen() }
                group.addTask { await self.relay() }
                group.addTask { await self.watchNodes(since: joinedAt) }
                group.addTask { await self.exchangeQuotas() }
                await group.waitForAll()
            }
        }
        do {
            try await cluster.leave()
            logger.info("left the cluster", metadata: ["node": "\(cluster.nodeID)"])
        } catch {
            logger.warning("leaving the cluster failed", metadata: ["error": "\(error)"])
        }
    }

    /// Wakes the local sessions of devices other nodes stored messages for. Signals sent
    /// while this node was not listening (a lost connection, a failover) are lost, so once
    /// it listens again every local session reads its queue.
    private func listen() async {
        while !Task.isCancelled {
            do {
                try await cluster.listenForSignals(listening: { devices.wakeAll() }) { androidIDs in
                    for androidID in androidIDs { devices.wake(androidID: androidID) }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("cluster signals interrupted", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Sends the gathered devices' signals to the nodes holding them; signals that could
    /// not be sent go back to the outbox and are tried again a little later (their messages
    /// are stored, and their devices must hear of them).
    private func relay() async {
        for await _ in outbox.arrivals {
            try? await Task.sleep(for: timing.signalDelay)
            let pending = outbox.take()
            guard !pending.isEmpty else { continue }
            var unsent = Set(pending)
            do {
                let holders = try await cluster.remoteHolders(androidIDs: pending)
                unsent.subtract(pending.filter { holders[$0] == nil })
                for (node, held) in Dictionary(grouping: holders, by: \.value) {
                    let devices = held.map(\.key)
                    try await cluster.signal(node: node, androidIDs: devices)
                    unsent.subtract(devices)
                }
            } catch {
                logger.warning(
                    "cluster signal failed; trying again",
                    metadata: ["error": "\(error)", "devices": "\(unsent.count)"])
                try? await Task.sleep(for: timing.signalRetry)
                outbox.add(contentsOf: unsent)
            }
        }
    }

    /// Heartbeats, and takes over what dead nodes held (`NodeWatch` says when it may).
    private func watchNodes(since joinedAt: Timestamp) async {
        var watch = NodeWatch(deadAfterMilliseconds: timing.deadAfterMilliseconds, beatingSince: joinedAt)
        while !Task.isCancelled {
            do {
                let now = clock.now()
                let beat: NodeHeartbeat
                do {
                    beat = try await cluster.heartbeat(now: now, deadAfterMilliseconds: timing.deadAfterMilliseconds)
                } catch {
                    watch.heartbeatFailed()
                    throw error
                }
                if beat.wasForgotten { try await claimAgain() }
                for node in watch.heartbeatWritten(now: now, stale: beat.staleNodes) {
                    let adopted = try await cluster.releaseNode(node)
                    logger.notice(
                        "node stopped answering: its claims are released",
                        metadata: ["node": "\(node)", "fanouts": "\(adopted)"])
                    if adopted > 0 { try await fanouts.resume() }
                }
            } catch {
                logger.warning("cluster heartbeat failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: timing.heartbeat)
        }
    }

    /// Another node took this one for dead (it could not write its heartbeat for a while)
    /// and released its devices: claims again those still connected here, and has each read
    /// its queue for what was stored while nobody claimed it.
    private func claimAgain() async throws {
        let connected = devices.connectedDevices()
        guard !connected.isEmpty else { return }
        let claimed = try await cluster.claimConnections(androidIDs: connected)
        logger.notice(
            "this node was taken for dead: its connections are claimed again",
            metadata: ["connected": "\(connected.count)", "claimed": "\(claimed)"])
        devices.wakeAll()
    }

    /// Shares this node's project quota counts and learns the others'. Every `quotaExchange`
    /// it looks at its own counts, which costs no store call, and exchanges a quota's when
    /// they changed, when another node published its counts (`WorkSignals`), and at least
    /// every `quietQuotaExchange`: a node that accepts nothing sends nothing, and still knows
    /// the others' counts within a `quotaExchange` of their change. Without signals it
    /// exchanges every `quotaExchange`.
    private func exchangeQuotas() async {
        var published: [Quotas.Shared: Set<QuotaCount>] = [:]
        var exchanged: [Quotas.Shared: ContinuousClock.Instant] = [:]
        var heard = work?[.quotas].mark()
        while !Task.isCancelled {
            let now = clock.now()
            let hearing = work?[.quotas].mark()
            let othersPublished = work == nil || hearing != heard
            heard = hearing
            for quota in Quotas.Shared.allCases {
                let counts = Set(quotas.localCounts(quota, now: now))
                let changed = Array(counts.subtracting(published[quota] ?? []))
                let quiet = exchanged[quota].map { ContinuousClock.now - $0 >= timing.quietQuotaExchange } ?? true
                guard othersPublished || quiet || !changed.isEmpty else { continue }
                exchanged[quota] = .now
                do {
                    let others = try await cluster.exchangeQuotaCounts(
                        quota: quota.rawValue, mine: changed,
                        since: now.adding(milliseconds: -Quotas.windowMilliseconds(quota)))
                    quotas.setRemoteCounts(quota, others, now: now)
                    published[quota] = counts
                } catch {
                    // One cut short by the node's stop is not news.
                    if !Task.isCancelled { logger.warning("quota exchange failed", metadata: ["error": "\(error)"]) }
                }
            }
            try? await Task.sleep(for: timing.quotaExchange)
        }
    }
}

/// Devices waiting to be signalled, gathered from the delivery paths (which must not wait
/// for the database), at most `capacity` at once: past it, later ones are left to their
/// devices' next connection.
final class Outbox: Sendable {
    private let pending = Mutex<Set<UInt64>>([])
    let capacity = 100_000
    /// One element whenever a device arrives in an empty outbox.
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    init() {
        (arrivals, arrived) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func add(_ androidID: UInt64) {
        let wasEmpty = pending.withLock { pending in
            let wasEmpty = pending.isEmpty
            if pending.count < capacity { pending.insert(androidID) }
            return wasEmpty
        }
        if wasEmpty { arrived.yield() }
    }

    func add(contentsOf androidIDs: some Sequence<UInt64>) {
        for androidID in androidIDs { add(androidID) }
    }

    func take() -> [UInt64] {
        pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return Array(pending)
        }
    }
}
