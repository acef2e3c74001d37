import CoreMetrics
import HeraldCore
import HeraldDelivery
import HeraldStorage
import HeraldTelemetry
import HeraldTestSupport
import Logging
import Synchronization
import Testing

@testable import HeraldServer

/// How a node keeps its devices woken through a lost store: a signal that could not be
/// sent is sent later, every local session reads its queue once the node listens again,
/// and a node taken for dead claims its devices again. Two nodes over one PostgreSQL
/// database; the one under test reaches it through `FlakyCluster`.
@Suite(.enabled(if: TestPostgres.location != nil, "needs PostgreSQL: run scripts/test (sets HERALD_TEST_POSTGRES)"))
struct ClusterServiceTests {
    @Test func signalsAndClaimsOutliveFailuresOfTheStore() async throws {
        let a = try await TestPostgres.store("a")
        let b = try await TestPostgres.store("b", sharing: a)
        for androidID: UInt64 in [1, 2] {
            try await a.createDevice(Device(androidID: androidID, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        }
        try await a.recordConnection(androidID: 1, at: Timestamp(seconds: 1))
        try await b.recordConnection(androidID: 2, at: Timestamp(seconds: 1))
        let flaky = FlakyCluster(a, failingHolderLookups: 2)
        let devices = DeliveryPath()
        let session = CountingMailbox()
        devices.register(androidID: 1, session)
        let outbox = Outbox()
        var timing = ClusterService.Timing()
        timing.heartbeat = .milliseconds(100)
        timing.signalRetry = .milliseconds(50)
        let service = ClusterService(
            cluster: flaky, devices: devices, outbox: outbox, quotas: Quotas(),
            fanouts: FanoutEngine(
                store: a, clock: SystemClock(), metrics: HeraldMetrics(factory: NOOPMetricsHandler.instance),
                path: devices, projects: { _ in nil }, logger: Logger(label: "cluster-service-test"), cluster: flaky),
            clock: SystemClock(), timing: timing, logger: Logger(label: "cluster-service-test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }

        // Once node a listens, its sessions read their queues (signals before were lost).
        #expect(await eventually { session.wakes > 0 })

        // A signal for b's device whose holder could not be looked up (twice) still reaches b.
        let heard = Mutex<Set<UInt64>>([])
        let listener = Task {
            try await b.listenForSignals(listening: {}) { ids in heard.withLock { $0.formUnion(ids) } }
        }
        defer { listener.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        outbox.add(2)
        #expect(await eventually { heard.withLock { $0.contains(2) } })
        #expect(flaky.holderLookupsFailed == 2)

        // b takes a for dead and releases its device; a claims it again and has it read its queue.
        let wakesBefore = session.wakes
        _ = try await b.releaseNode("a")
        #expect(await eventually { (try? await b.remoteHolders(androidIDs: [1])) == [1: "a"] })
        #expect(await eventually { session.wakes > wakesBefore })
    }

    /// Whether `condition` holds within twenty seconds (a busy test run is slow to schedule).
    private func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<400 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}

/// A session's mailbox that counts how often it was asked to read its queue.
private final class CountingMailbox: DeviceMailbox {
    let connectionID: UInt64 = 1
    private let count = Mutex(0)
    var wakes: Int { count.withLock { $0 } }

    func wake() { count.withLock { $0 += 1 } }

    func replaced() {}
}

/// A node's cluster whose first holder look-ups fail, as they do while the store fails
/// over; everything else is the PostgreSQL store's.
private final class FlakyCluster: Cluster {
    private let base: PostgresStore
    private let failures: Mutex<(left: Int, failed: Int)>
    var holderLookupsFailed: Int { failures.withLock { $0.failed } }

    init(_ base: PostgresStore, failingHolderLookups: Int) {
        self.base = base
        failures = Mutex((failingHolderLookups, 0))
    }

    var nodeID: String { base.nodeID }
    var isShared: Bool { true }

    func remoteHolders(androidIDs: [UInt64]) async throws -> [UInt64: String] {
        let fails = failures.withLock { counts in
            guard counts.left > 0 else { return false }
            counts.left -= 1
            counts.failed += 1
            return true
        }
        if fails { throw StoreError.unavailable("no primary") }
        return try await base.remoteHolders(androidIDs: androidIDs)
    }

    func heartbeat(now: Timestamp, deadAfterMilliseconds: Int64) async throws -> NodeHeartbeat {
        try await base.heartbeat(now: now, deadAfterMilliseconds: deadAfterMilliseconds)
    }

    func node(_ id: String) async throws -> NodeRecord? { try await base.node(id) }

    func leave() async throws { try await base.leave() }

    func releaseNode(_ node: String) async throws -> Int { try await base.releaseNode(node) }

    func claimConnections(androidIDs: [UInt64]) async throws -> Int {
        try await base.claimConnections(androidIDs: androidIDs)
    }

    func releaseConnection(androidID: UInt64) async throws { try await base.releaseConnection(androidID: androidID) }

    func devicesHeldElsewhere() async throws -> [UInt64] { try await base.devicesHeldElsewhere() }

    func signal(node: String, androidIDs: [UInt64]) async throws {
        try await base.signal(node: node, androidIDs: androidIDs)
    }

    func listenForSignals(
        listening: @escaping @Sendable () async -> Void, _ receive: @escaping @Sendable ([UInt64]) async -> Void
    ) async throws {
        try await base.listenForSignals(listening: listening, receive)
    }

    func recentMessages(to targets: [String], minuteSince: Timestamp, hourSince: Timestamp) async throws
        -> RecentMessages
    {
        try await base.recentMessages(to: targets, minuteSince: minuteSince, hourSince: hourSince)
    }

    func exchangeQuotaCounts(quota: String, mine: [QuotaCount], since: Timestamp) async throws -> [QuotaCount] {
        try await base.exchangeQuotaCounts(quota: quota, mine: mine, since: since)
    }
}
