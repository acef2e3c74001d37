import CoreMetrics
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStorage
import HeraldTelemetry
import HeraldTestSupport
import Logging
import Synchronization
import Testing

/// What several nodes sharing one PostgreSQL database rely on, with one store instance per
/// node over the same database. Skipped without the test command's PostgreSQL.
@Suite(.enabled(if: TestPostgres.location != nil, "needs PostgreSQL: run scripts/test (sets HERALD_TEST_POSTGRES)"))
struct ClusterStoreTests {
    /// Stores for `nodes` over one new database, with a project and a device per node.
    func cluster(_ nodes: [String]) async throws -> [PostgresStore] {
        let first = try await TestPostgres.store(nodes[0])
        var stores = [first]
        for node in nodes.dropFirst() {
            stores.append(try await TestPostgres.store(node, sharing: first))
        }
        try await first.createProject(sampleProject(), firstKey: sampleKey("k1"))
        for (index, _) in nodes.enumerated() {
            let androidID = UInt64(index + 1)
            try await first.createDevice(
                Device(androidID: androidID, securityToken: 1, createdAt: Timestamp(seconds: 1)))
            try await first.createRegistration(
                Registration(
                    token: "token-\(androidID)", kind: .app, projectID: "alpha-project", sender: "1", appID: "app",
                    subtype: nil, platform: .android, androidID: androidID, installationID: nil, webKeys: nil,
                    createdAt: Timestamp(seconds: 1)))
        }
        return stores
    }

    @Test func aDeviceIsHeldByTheNodeItLastConnectedToUntilItLeaves() async throws {
        let stores = try await cluster(["a", "b"])
        let (a, b) = (stores[0], stores[1])
        try await b.recordConnection(androidID: 1, at: Timestamp(seconds: 10))
        #expect(try await a.remoteHolders(androidIDs: [1, 2]) == [1: "b"])
        // b sees no other node holding it.
        #expect(try await b.remoteHolders(androidIDs: [1]) == [:])
        // The device moved to a before b noticed its old connection end: b's release leaves a's claim.
        try await a.recordConnection(androidID: 1, at: Timestamp(seconds: 11))
        try await b.releaseConnection(androidID: 1)
        #expect(try await b.remoteHolders(androidIDs: [1]) == [1: "a"])
        try await a.releaseConnection(androidID: 1)
        #expect(try await b.remoteHolders(androidIDs: [1]) == [:])
    }

    @Test func eachNodeListsTheDevicesTheOthersHold() async throws {
        let stores = try await cluster(["a", "b", "c"])
        let (a, b, c) = (stores[0], stores[1], stores[2])
        try await b.recordConnection(androidID: 1, at: Timestamp(seconds: 10))
        try await c.recordConnection(androidID: 3, at: Timestamp(seconds: 10))
        #expect(try await a.devicesHeldElsewhere() == [1, 3])
        #expect(try await b.devicesHeldElsewhere() == [3])
        try await b.releaseConnection(androidID: 1)
        #expect(try await a.devicesHeldElsewhere() == [3])
        #expect(try await c.devicesHeldElsewhere() == [])
    }

    @Test func T3_aFanoutReachesDevicesAnotherNodeHoldsBeforeTheOfflineOnes() async throws {
        let stores = try await cluster(["a", "b"])
        let (a, b) = (stores[0], stores[1])
        let clock = ManualClock(Timestamp(seconds: 1_800_000_000))
        // Device 1 was seen lately but is offline; device 2 is connected to node b.
        try await a.recordConnection(androidID: 1, at: clock.now())
        try await a.releaseConnection(androidID: 1)
        try await b.recordConnection(androidID: 2, at: clock.now())
        for token in ["token-1", "token-2"] {
            _ = try await a.subscribe(
                TopicSubscription(projectID: "alpha-project", token: token, topic: "news", createdAt: clock.now()),
                limit: 2000)
        }
        let job = FanoutJob(
            messageID: "f1", projectID: "alpha-project", audience: .topic("news"), body: #"{"data":{"k":"v"}}"#,
            createdAt: clock.now(), expiresAt: clock.now().adding(seconds: 3600))
        try await a.createFanout(sampleMessage("f1"), job: job, stats: [])
        let project = sampleProject()
        // Node a expands it, one registration a page, with no device connected to it.
        let engine = FanoutEngine(
            store: a, clock: clock, metrics: HeraldMetrics(factory: NOOPMetricsHandler.instance),
            path: DeliveryPath(), projects: { $0 == project.id ? project : nil },
            logger: Logger(label: "fanout-test"), pageSize: 1, cluster: a)
        engine.submit(job)
        try await engine.step()
        // token-2 comes after token-1, yet b's device has it first.
        #expect(try await a.queuedCount(androidID: 2) == 1)
        #expect(try await a.queuedCount(androidID: 1) == 0)
        while try await engine.step() != nil {}
        #expect(try await a.queuedCount(androidID: 1) == 1)
        #expect(try await a.queuedCount(androidID: 2) == 1)
    }

    @Test func aSilentNodeIsFoundAndItsClaimsAndFanoutsTakenOver() async throws {
        let stores = try await cluster(["a", "b"])
        let (a, b) = (stores[0], stores[1])
        _ = try await a.heartbeat(now: Timestamp(seconds: 100), deadAfterMilliseconds: 5_000)
        #expect(try await b.heartbeat(now: Timestamp(seconds: 102), deadAfterMilliseconds: 5_000).staleNodes == [])
        try await a.recordConnection(androidID: 1, at: Timestamp(seconds: 100))
        let job = FanoutJob(
            messageID: "f1", projectID: "alpha-project", audience: .topic("news"), body: "{}",
            createdAt: Timestamp(seconds: 100), expiresAt: Timestamp(seconds: 10_000))
        try await a.createFanout(sampleMessage("f1"), job: job, stats: [])
        #expect(try await b.unfinishedFanouts().isEmpty)
        // a stops answering.
        #expect(try await b.heartbeat(now: Timestamp(seconds: 106), deadAfterMilliseconds: 5_000).staleNodes == ["a"])
        #expect(try await b.releaseNode("a") == 1)
        #expect(try await b.unfinishedFanouts().map(\.messageID) == ["f1"])
        #expect(try await b.remoteHolders(androidIDs: [1]) == [:])
        // a, taken for dead, can no longer store pages of the job it lost.
        await #expect(throws: StoreError.self) {
            try await a.storeFanoutPage(
                messageID: "f1", queue: [], firstDone: 0, cursor: "x", reached: 0, done: false, limits: .unlimited,
                stats: [])
        }
        try await b.storeFanoutPage(
            messageID: "f1", queue: [], firstDone: 0, cursor: "x", reached: 0, done: true, limits: .unlimited, stats: []
        )
        #expect(try await b.unfinishedFanouts().isEmpty)
    }

    @Test func aNodeTakenForDeadLearnsItAndClaimsItsConnectionsAgain() async throws {
        let stores = try await cluster(["a", "b"])
        let (a, b) = (stores[0], stores[1])
        // A node's first heartbeat writes its record; later ones find it.
        #expect(try await a.heartbeat(now: Timestamp(seconds: 100), deadAfterMilliseconds: 5_000).wasForgotten)
        #expect(!(try await a.heartbeat(now: Timestamp(seconds: 101), deadAfterMilliseconds: 5_000).wasForgotten))
        try await a.recordConnection(androidID: 1, at: Timestamp(seconds: 101))
        try await b.recordConnection(androidID: 2, at: Timestamp(seconds: 101))
        // b takes a for dead: a's device is claimed by nobody, and a's next heartbeat says so.
        _ = try await b.releaseNode("a")
        #expect(try await b.remoteHolders(androidIDs: [1]) == [:])
        #expect(try await a.heartbeat(now: Timestamp(seconds: 110), deadAfterMilliseconds: 5_000).wasForgotten)
        // a claims again what nobody claims, never a device another node holds.
        #expect(try await a.claimConnections(androidIDs: [1, 2]) == 1)
        #expect(try await b.remoteHolders(androidIDs: [1, 2]) == [1: "a"])
        #expect(try await a.remoteHolders(androidIDs: [1, 2]) == [2: "b"])
        #expect(try await a.claimConnections(androidIDs: []) == 0)
    }

    @Test func aSignalReachesTheListeningNodeOnly() async throws {
        let stores = try await cluster(["a", "b"])
        let (a, b) = (stores[0], stores[1])
        let heard = Mutex<[UInt64]>([])
        let (listening, isListening) = AsyncStream.makeStream(of: Void.self)
        let listener = Task {
            try await b.listenForSignals(listening: { isListening.yield() }) { androidIDs in
                heard.withLock { $0 += androidIDs }
            }
        }
        defer { listener.cancel() }
        // Once `listening` is called, the first signal is heard.
        for await _ in listening { break }
        let many = (1...700).map { UInt64($0) << 40 }
        try await a.signal(node: "b", androidIDs: [UInt64.max, 7])
        for _ in 0..<100 where heard.withLock({ $0.isEmpty }) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(heard.withLock { Set($0) } == [UInt64.max, 7])
        heard.withLock { $0 = [] }
        // More devices than one notification carries arrive in several.
        try await a.signal(node: "b", androidIDs: many)
        try await a.signal(node: "a", androidIDs: [1])
        for _ in 0..<100 where heard.withLock({ $0.count }) < many.count {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(heard.withLock { $0 } == many)
    }

    @Test func T1_quotaCountsAreSharedPerProjectAndForgottenAfterTheWindow() async throws {
        let stores = try await cluster(["a", "b", "c"])
        let (a, b, c) = (stores[0], stores[1], stores[2])
        let since = Timestamp(seconds: 1_000)
        _ = try await a.exchangeQuotaCounts(
            quota: "downstream",
            mine: [QuotaCount(projectID: "p", bucket: 1_000_100, count: 3)], since: since)
        _ = try await b.exchangeQuotaCounts(
            quota: "downstream",
            mine: [
                QuotaCount(projectID: "p", bucket: 1_000_100, count: 2),
                QuotaCount(projectID: "q", bucket: 1_000_200, count: 1),
            ], since: since)
        // A second report of a bucket replaces the first.
        _ = try await b.exchangeQuotaCounts(
            quota: "downstream", mine: [QuotaCount(projectID: "p", bucket: 1_000_100, count: 4)], since: since)
        let seen = try await c.exchangeQuotaCounts(quota: "downstream", mine: [], since: since)
        #expect(
            Set(seen) == [
                QuotaCount(projectID: "p", bucket: 1_000_100, count: 7),
                QuotaCount(projectID: "q", bucket: 1_000_200, count: 1),
            ])
        // a does not count itself; another quota is separate; old buckets are gone.
        #expect(
            try await a.exchangeQuotaCounts(quota: "downstream", mine: [], since: since).contains {
                $0 == QuotaCount(projectID: "p", bucket: 1_000_100, count: 4)
            })
        #expect(try await c.exchangeQuotaCounts(quota: "topic-ops", mine: [], since: since).isEmpty)
        #expect(
            try await c.exchangeQuotaCounts(quota: "downstream", mine: [], since: Timestamp(seconds: 2_000)).isEmpty)
    }

    /// A stored message to `target`, sent at `seconds`.
    func message(_ id: String, to target: String, kind: TargetKind = .token, at seconds: Int64) -> StoredMessage {
        StoredMessage(
            id: id, projectID: "alpha-project", targetKind: kind, target: target, body: "{}",
            createdAt: Timestamp(seconds: seconds), expiresAt: Timestamp(seconds: 100_000))
    }

    @Test func T6_messagesToAnAppInstanceAreCountedFromWhatEveryNodeStored() async throws {
        let stores = try await cluster(["a", "b"])
        try await stores[0].appendMessages([
            message("m1", to: "token-1", at: 10), message("m2", to: "token-1", at: 3_500),
            message("m3", to: "other", at: 3_550),
        ])
        try await stores[1].appendMessages([
            message("m4", to: "fid-1", kind: .fid, at: 3_565), message("m5", to: "token-1", at: 3_570),
        ])
        let now = Timestamp(seconds: 3_620)
        let recent = try await stores[1].recentMessages(
            to: ["token-1", "fid-1"], minuteSince: now.adding(milliseconds: -60_000),
            hourSince: now.adding(milliseconds: -3_600_000))
        #expect(
            recent
                == RecentMessages(
                    minute: 2, hour: 3, oldestInMinute: Timestamp(seconds: 3_565),
                    oldestInHour: Timestamp(seconds: 3_500)))
    }

    @Test func T6_L5_aSendsRecipientIsReadWithItsDevicesLastConnectionAndItsRecentMessages() async throws {
        let stores = try await cluster(["a", "b"])
        try await stores[0].createRegistration(
            Registration(
                token: "token-f", kind: .app, projectID: "alpha-project", sender: "1", appID: "app", subtype: nil,
                platform: .android, androidID: 2, installationID: "fid-1", webKeys: nil,
                createdAt: Timestamp(seconds: 2)))
        try await stores[0].appendMessages([
            message("m1", to: "token-1", at: 10), message("m2", to: "token-1", at: 3_500),
            message("m3", to: "fid-1", kind: .fid, at: 3_565), message("m4", to: "token-f", at: 3_400),
        ])
        try await stores[1].appendMessages([message("m5", to: "token-1", at: 3_570)])
        try await stores[0].recordConnection(androidID: 1, at: Timestamp(seconds: 3_000))
        let now = Timestamp(seconds: 3_620)

        let byToken = try #require(try await stores[1].recipient(token: "token-1", countingRecentBefore: now))
        #expect(byToken.registration.token == "token-1")
        #expect(byToken.lastConnectedAt == .some(Timestamp(seconds: 3_000)))
        let windows = RecentMessages.windows(before: now)
        let counted = try await stores[1].recentMessages(
            to: ["token-1"], minuteSince: windows.minute, hourSince: windows.hour)
        #expect(
            byToken.recent == counted
                && counted
                    == RecentMessages(
                        minute: 1, hour: 2, oldestInMinute: Timestamp(seconds: 3_570),
                        oldestInHour: Timestamp(seconds: 3_500))
        )
        #expect(try await stores[1].recipient(token: "token-1", countingRecentBefore: nil)?.recent == nil)
        #expect(try await stores[1].recipient(token: "token-9", countingRecentBefore: now) == nil)

        // By installation: its token's messages and its own count, and a device that never connected.
        let byInstallation = try #require(
            try await stores[0].recipient(
                installationID: "fid-1", projectID: "alpha-project", countingRecentBefore: now))
        #expect(byInstallation.registration.token == "token-f")
        #expect(byInstallation.lastConnectedAt == .some(nil))
        #expect(
            byInstallation.recent
                == RecentMessages(
                    minute: 1, hour: 2, oldestInMinute: Timestamp(seconds: 3_565),
                    oldestInHour: Timestamp(seconds: 3_400)))
    }

    @Test func T6_L5_sendsThroughTwoNodesAreCountedTogetherAndAnInactiveDeviceIsDropped() async throws {
        let stores = try await cluster(["a", "b"])
        let clock = ManualClock(Timestamp(seconds: 1_800_000_000))
        var project = sampleProject()
        project.settings.devicePerMinute = 2
        for androidID in [1, 2] as [UInt64] {
            try await stores[0].createRegistration(
                Registration(
                    token: "d\(androidID):APA91bapp", kind: .app, projectID: "alpha-project", sender: "1",
                    appID: "app", subtype: nil, platform: .android, androidID: androidID, installationID: nil,
                    webKeys: nil, createdAt: Timestamp(seconds: 1)))
        }
        try await stores[0].recordConnection(androidID: 1, at: clock.now())
        let nodes = stores.map { store in
            Dispatcher(
                store: store, clock: clock, metrics: HeraldMetrics(factory: NOOPMetricsHandler.instance),
                path: DeliveryPath(clock: clock), acknowledgementWait: nil, cluster: store,
                logger: Logger(label: "recipient-test"))
        }
        func send(to token: String, through node: Int) async throws {
            _ = try await nodes[node].send(
                try SendRequest.decode(Array(#"{"message":{"token":"\#(token)","data":{"k":"v"}}}"#.utf8)),
                project: project)
        }
        try await send(to: "d1:APA91bapp", through: 0)
        try await send(to: "d1:APA91bapp", through: 1)
        await #expect(throws: HeraldError.self) { try await send(to: "d1:APA91bapp", through: 0) }
        // Device 2 never connected, and its registration is older than 31 days (SEMANTICS L5).
        try await send(to: "d2:APA91bapp", through: 1)
        let pending = { (androidID: UInt64) in
            try await stores[0].pendingMessages(androidID: androidID, after: 0, limit: 10, now: clock.now())
        }
        #expect(try await pending(1).map(\.deletedCount) == [0, 0])
        #expect(try await pending(2).map(\.deletedCount) == [1])
    }

    @Test func D2_writersOnTwoNodesKeepOneDevicesQueueWithinItsLimits() async throws {
        let stores = try await cluster(["a", "b"])
        let limits = QueueLimits(maximumPending: 1_000, maximumCollapseKeys: 4)
        // Two nodes store collapsible messages for one app instance at once, four writers each.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in (stores + stores + stores + stores).enumerated() {
                group.addTask {
                    for n in 0..<25 {
                        let entry = QueuedMessage(
                            androidID: 1, token: "token-1", persistentID: "p\(index)-\(n)", messageID: "m\(index)-\(n)",
                            projectID: "alpha-project", stanza: [1], createdAt: Timestamp(seconds: 10),
                            expiresAt: Timestamp(seconds: 100_000), collapseKey: "key-\(n % 6)")
                        try await store.appendMessages([], queue: [entry], limits: limits, stats: [])
                    }
                }
            }
            try await group.waitForAll()
        }
        let queued = try await stores[0].pendingMessages(
            androidID: 1, after: 0, limit: 100, now: Timestamp(seconds: 20))
        // At most four keys, one message each: the writers saw each other's rows.
        #expect(queued.count == 4)
        #expect(Set(queued.compactMap(\.collapseKey)).count == 4)
        #expect(queued.map(\.sequence) == queued.map(\.sequence).sorted())
    }
}
