import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStorage
import HeraldTelemetry
import HeraldTestSupport
import Logging
import Prometheus
import Synchronization
import Testing

/// The fanout engine (SEMANTICS T3): pages, fairness, limits, resuming.
@Suite struct FanoutEngineTests {
    struct World {
        let store: any HeraldStore
        let project: Project
        let clock = ManualClock(Timestamp(seconds: 1_800_000_000))

        func engine(
            pageSize: Int, registry: DeliveryPath = DeliveryPath(), firstDeviceBudget: Int = 500_000,
            settle: DeliveryPath.Settle? = FanoutEngine.defaultSettle
        ) -> FanoutEngine {
            let project = project
            return FanoutEngine(
                store: store, clock: clock, metrics: HeraldMetrics(factory: PrometheusMetricsFactory()),
                path: registry, projects: { $0 == project.id ? project : nil },
                logger: Logger(label: "fanout-test"), pageSize: pageSize, firstDeviceBudget: firstDeviceBudget,
                settle: settle)
        }

        /// Registers `count` app instances subscribed to `topics`; answers their tokens.
        func subscribers(_ count: Int, topics: [String]) async throws -> [String] {
            var tokens: [String] = []
            for _ in 0..<count {
                let device = Device.make(at: clock.now())
                try await store.createDevice(device)
                try await store.recordConnection(androidID: device.androidID, at: clock.now())
                let token = Registration.makeToken()
                try await store.createRegistration(
                    Registration(
                        token: token, kind: .app, projectID: project.id, sender: "1", appID: "app", subtype: nil,
                        platform: .android, androidID: device.androidID, createdAt: clock.now()))
                for topic in topics {
                    _ = try await store.subscribe(
                        TopicSubscription(projectID: project.id, token: token, topic: topic, createdAt: clock.now()),
                        limit: 2000)
                }
                tokens.append(token)
            }
            return tokens
        }

        func job(_ id: String, _ audience: FanoutJob.Audience) async throws -> FanoutJob {
            let job = FanoutJob(
                messageID: id, projectID: project.id, audience: audience, body: #"{"data":{"k":"v"}}"#,
                createdAt: clock.now(), expiresAt: clock.now().adding(seconds: 3600))
            try await store.createFanout(
                StoredMessage(
                    id: id, projectID: project.id, targetKind: .topic, target: "x", body: job.body,
                    createdAt: job.createdAt,
                    expiresAt: job.expiresAt),
                job: job, stats: [])
            return job
        }

        /// A registry in which the devices of `tokens` hold connections; answers it and a
        /// record of the entries its sessions were told of, in order.
        func connected(_ tokens: [String]) async throws -> (DeliveryPath, Told) {
            let registry = DeliveryPath()
            let told = Told()
            for (n, token) in tokens.enumerated() {
                let registration = try #require(try await store.registration(token: token))
                registry.register(
                    androidID: registration.androidID,
                    ClosureMailbox(id: UInt64(n), wake: {}, replace: {}, stored: { told.add($0.token) }))
            }
            return (registry, told)
        }

        /// How many queue entries each token has.
        func entriesPerToken(_ tokens: [String]) async throws -> [Int] {
            var counts: [Int] = []
            for token in tokens {
                let registration = try #require(try await store.registration(token: token))
                counts.append(try await store.queuedCount(androidID: registration.androidID))
            }
            return counts
        }
    }

    /// The tokens sessions were told of.
    final class Told: Sendable {
        private let tokens = Mutex<[String]>([])
        func add(_ token: String) { tokens.withLock { $0.append(token) } }
        var all: [String] { tokens.withLock { $0 } }
    }

    static func world(_ store: any HeraldStore, configure: (inout ProjectSettings) -> Void = { _ in }) async throws
        -> World
    {
        var project = Project.make(id: "fanout-project", createdAt: Timestamp(seconds: 0))
        configure(&project.settings)
        try await store.createProject(
            project,
            firstKey: ServiceAccountKey(
                id: "k", projectID: project.id, clientEmail: "e", publicKeyPEM: "", createdAt: project.createdAt))
        return World(store: store, project: project)
    }

    @Test func T3_twoFanoutsOfAProjectProgressAtTheSameRate() async throws {
        let world = try await Self.world(InMemoryStore())
        _ = try await world.subscribers(40, topics: ["a", "b"])
        let engine = world.engine(pageSize: 5)
        await engine.submit(try await world.job("m-a", .topic("a")))
        await engine.submit(try await world.job("m-b", .topic("b")))
        var turns: [String] = []
        for _ in 0..<6 { turns.append(try #require(try await engine.step())) }
        #expect(turns == ["m-a", "m-b", "m-a", "m-b", "m-a", "m-b"])
        let jobs = try await world.store.unfinishedFanouts()
        #expect(jobs.map(\.delivered) == [15, 15])
    }

    @Test func T3_projectsTakeTurnsSoOneCannotStarveAnother() async throws {
        let store = InMemoryStore()
        let busy = try await Self.world(store)
        _ = try await busy.subscribers(30, topics: ["t"])
        var quiet = Project.make(id: "quiet-project", createdAt: Timestamp(seconds: 0))
        quiet.settings.maxFanouts = 5
        try await store.createProject(
            quiet,
            firstKey: ServiceAccountKey(
                id: "q", projectID: quiet.id, clientEmail: "e", publicKeyPEM: "", createdAt: quiet.createdAt))
        let engine = FanoutEngine(
            store: store, clock: busy.clock, metrics: HeraldMetrics(factory: PrometheusMetricsFactory()),
            path: DeliveryPath(),
            projects: { [busy, quiet] id in id == busy.project.id ? busy.project : id == quiet.id ? quiet : nil },
            logger: Logger(label: "t"), pageSize: 5)
        for n in 0..<3 { await engine.submit(try await busy.job("busy-\(n)", .topic("t"))) }
        let quietWorld = World(store: store, project: quiet)
        await engine.submit(try await quietWorld.job("quiet-0", .topic("t")))
        let first = try await engine.step()
        let second = try await engine.step()
        #expect(first == "busy-0")
        #expect(second == "quiet-0")
    }

    @Test func T3_everySubscriberGetsTheMessageOnceAndTheJobFinishes() async throws {
        let world = try await Self.world(InMemoryStore())
        let tokens = try await world.subscribers(23, topics: ["news"])
        let outsiders = try await world.subscribers(4, topics: ["other"])
        let engine = world.engine(pageSize: 5)
        await engine.submit(try await world.job("m1", .topic("news")))
        while try await engine.step() != nil {}
        #expect(try await world.entriesPerToken(tokens) == Array(repeating: 1, count: 23))
        #expect(try await world.entriesPerToken(outsiders) == [0, 0, 0, 0])
        #expect(try await world.store.unfinishedFanouts().isEmpty)
    }

    /// T3: an unregistered app instance keeps its subscriptions; passing over it leaves its
    /// page short of the page size, which must not end the job before the rest of the topic.
    @Test(arguments: [false, true])
    func T3_unregisteredAppInstancesInAPageDoNotEndTheFanout(onSQLite: Bool) async throws {
        let directory = createdTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store: any HeraldStore = onSQLite ? try SQLiteStore(dataDirectory: directory) : InMemoryStore()
        let world = try await Self.world(store)
        let tokens = try await world.subscribers(12, topics: ["news"])
        let order = try await store.audience(projectID: world.project.id, topics: ["news"], after: "", limit: 100)
        let gone = [order[1].token, order[7].token]
        for token in gone { _ = try await store.deleteRegistration(token: token, at: world.clock.now()) }
        let engine = world.engine(pageSize: 5)
        await engine.submit(try await world.job("m1", .topic("news")))
        while try await engine.step() != nil {}
        let live = tokens.filter { !gone.contains($0) }
        #expect(try await world.entriesPerToken(live) == Array(repeating: 1, count: 10))
        #expect(try await store.unfinishedFanouts().isEmpty)
    }

    @Test func T3_aFanoutResumesWhereItStoppedAfterARestart() async throws {
        let directory = createdTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let world = try await Self.world(try SQLiteStore(dataDirectory: directory))
        let tokens = try await world.subscribers(20, topics: ["news"])
        let before = world.engine(pageSize: 6)
        await before.submit(try await world.job("m1", .topic("news")))
        try await before.step()
        try await before.step()
        // Its cursor is a device and a token (`FanoutPosition`).
        let stored = try #require(try await world.store.unfinishedFanouts().first)
        guard case .after = FanoutPosition(cursor: stored.cursor) else {
            Issue.record("cursor \(stored.cursor)")
            return
        }
        // The process dies; a new one opens the same database.
        let reopened = World(store: try SQLiteStore(dataDirectory: directory), project: world.project)
        let after = reopened.engine(pageSize: 6)
        try await after.resume()
        while try await after.step() != nil {}
        #expect(try await reopened.entriesPerToken(tokens) == Array(repeating: 1, count: 20))
        #expect(try await reopened.store.unfinishedFanouts().isEmpty)
    }

    /// T3: a job stored by a build that paged in token order, its cursor a bare token,
    /// resumes after that token in token order: the tokens before it had the message then.
    @Test func T3_aJobWithATokenCursorResumesInTokenOrder() async throws {
        let directory = createdTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let world = try await Self.world(try SQLiteStore(dataDirectory: directory))
        let tokens = try await world.subscribers(20, topics: ["news"]).sorted()
        _ = try await world.job("m1", .topic("news"))
        try await world.store.storeFanoutPage(
            messageID: "m1", queue: [], firstDone: 0, cursor: tokens[5], reached: 6, done: false, limits: .unlimited,
            stats: [])
        let engine = world.engine(pageSize: 6)
        try await engine.resume()
        for _ in 0..<10 where try await engine.step() != nil {}
        #expect(
            try await world.entriesPerToken(tokens) == Array(repeating: 0, count: 6) + Array(repeating: 1, count: 14))
        #expect(try await world.store.unfinishedFanouts().isEmpty)
    }

    @Test func T3_fanoutsBeyondTheLimitWaitAndSendsAreRefusedOnlyWhenTheWaitListIsFull() async throws {
        let world = try await Self.world(InMemoryStore()) { $0.maxFanouts = 1 }
        _ = try await world.subscribers(3, topics: ["t"])
        let engine = world.engine(pageSize: 100)
        for n in 0..<3 { await engine.submit(try await world.job("m\(n)", .topic("t"))) }
        #expect(await engine.jobCount(projectID: world.project.id) == (1, 2))
        #expect(engine.hasRoom(for: world.project))
        // One runs; the wait list holds ten (maxFanouts × 10).
        for n in 3..<11 { await engine.submit(try await world.job("m\(n)", .topic("t"))) }
        #expect(await engine.jobCount(projectID: world.project.id) == (1, 10))
        #expect(!engine.hasRoom(for: world.project))
        try await engine.step()
        #expect(await engine.jobCount(projectID: world.project.id) == (1, 9))
        #expect(engine.hasRoom(for: world.project))
    }

    @Test func T3_jobsSubmittedBeforeTheEngineTakesThemInCountAsWaiting() async throws {
        let world = try await Self.world(InMemoryStore()) { $0.maxFanouts = 1 }
        let tokens = try await world.subscribers(3, topics: ["t"])
        let engine = world.engine(pageSize: 100)
        // Submitting takes no turn on the engine: ten jobs handed over and not yet taken
        // in fill the wait list, so an eleventh send is refused before the engine runs.
        for n in 0..<10 { engine.submit(try await world.job("m\(n)", .topic("t"))) }
        #expect(!engine.hasRoom(for: world.project))
        // Taken in, one of them runs and nine wait.
        #expect(await engine.jobCount(projectID: world.project.id) == (1, 9))
        #expect(engine.hasRoom(for: world.project))
        while try await engine.step() != nil {}
        #expect(await engine.jobCount(projectID: world.project.id) == (0, 0))
        #expect(try await world.entriesPerToken(tokens) == Array(repeating: 10, count: 3))
    }

    @Test func T3_jobsSubmittedAsTheEngineStartsAreQueuedOnceWhenItLoadsTheStoredOnes() async throws {
        let world = try await Self.world(InMemoryStore()) { $0.maxFanouts = 1 }
        let tokens = try await world.subscribers(3, topics: ["t"])
        let engine = world.engine(pageSize: 100)
        // Sends accepted while the node starts: stored, handed over, and also among the
        // unfinished jobs the engine loads; those that wait must not be queued twice.
        for n in 0..<3 { engine.submit(try await world.job("m\(n)", .topic("t"))) }
        try await engine.resume()
        #expect(await engine.jobCount(projectID: world.project.id) == (1, 2))
        while try await engine.step() != nil {}
        #expect(try await world.entriesPerToken(tokens) == Array(repeating: 3, count: 3))
    }

    @Test func T3_conditionsMatchEachAppInstanceOnceAndNegationsReachTheUnsubscribed() async throws {
        let world = try await Self.world(InMemoryStore())
        let both = try await world.subscribers(2, topics: ["a", "b"])
        let onlyA = try await world.subscribers(2, topics: ["a"])
        let neither = try await world.subscribers(2, topics: [])
        let engine = world.engine(pageSize: 3)
        await engine.submit(try await world.job("m-or", .condition("'a' in topics || 'b' in topics")))
        while try await engine.step() != nil {}
        #expect(try await world.entriesPerToken(both + onlyA + neither) == [1, 1, 1, 1, 0, 0])
        await engine.submit(try await world.job("m-not", .condition("!('b' in topics)")))
        while try await engine.step() != nil {}
        #expect(try await world.entriesPerToken(both + onlyA + neither) == [1, 1, 2, 2, 1, 1])
    }

    @Test func aDeviceGroupFanoutReachesItsLiveMembers() async throws {
        let world = try await Self.world(InMemoryStore())
        let members = try await world.subscribers(3, topics: [])
        try await world.store.createDeviceGroup(
            DeviceGroup(projectID: world.project.id, name: "g", notificationKey: "key", members: members))
        _ = try await world.store.deleteRegistration(token: members[2], at: world.clock.now())
        let engine = world.engine(pageSize: 2)
        await engine.submit(try await world.job("m-g", .deviceGroup(notificationKey: "key")))
        while try await engine.step() != nil {}
        #expect(try await world.entriesPerToken(Array(members.prefix(2))) == [1, 1])
    }

    @Test func T3_devicesConnectedHereGetTheMessageBeforeTheOfflineQueuesAreWritten() async throws {
        let world = try await Self.world(InMemoryStore())
        let tokens = try await world.subscribers(30, topics: ["news"]).sorted()
        _ = try await world.subscribers(3, topics: ["other"])
        // The last three in token order: without the first pass they would be reached last.
        let online = Array(tokens.suffix(3))
        let (registry, told) = try await world.connected(online)
        let engine = world.engine(pageSize: 5, registry: registry)
        await engine.submit(try await world.job("m1", .topic("news")))
        try await engine.step()
        #expect(told.all.sorted() == online)
        #expect(try await world.entriesPerToken(tokens) == Array(repeating: 0, count: 27) + [1, 1, 1])
        while try await engine.step() != nil {}
        // Each once: the pages in token order leave the first devices out.
        #expect(try await world.entriesPerToken(tokens) == Array(repeating: 1, count: 30))
        #expect(told.all.sorted() == online)
        #expect(try await world.store.unfinishedFanouts().isEmpty)
    }

    /// What the sessions of `offering` were offered and told, and the acknowledged rows
    /// handed to the acknowledgement writer.
    struct Sessions {
        let registry: DeliveryPath
        let offered = Told()
        let told = Told()
        let written: Told

        init() {
            let written = Told()
            self.written = written
            registry = DeliveryPath(
                acknowledgements: ClosureAcknowledgementWriter { _, ids in
                    for id in ids { written.add(id) }
                })
        }
    }

    /// Three devices connected here: two take what they are offered and acknowledge at
    /// once, as the gateway's sessions do; the third declines.
    func offering(_ tokens: [String], world: World) async throws -> Sessions {
        let sessions = Sessions()
        let registry = sessions.registry
        for (n, token) in tokens.prefix(3).enumerated() {
            let registration = try #require(try await world.store.registration(token: token))
            registry.register(
                androidID: registration.androidID,
                ClosureMailbox(
                    id: UInt64(n), wake: {}, replace: {}, stored: { sessions.told.add($0.token) },
                    offer: { entry, _ in
                        sessions.offered.add(entry.token)
                        guard n < 2 else {
                            registry.declined(androidID: entry.androidID, persistentID: entry.persistentID)
                            return true
                        }
                        registry.taken(androidID: entry.androidID, persistentID: entry.persistentID)
                        // Held by the path until the row exists: nothing is written yet.
                        registry.acknowledged(androidID: entry.androidID, [entry.persistentID])
                        #expect(!sessions.written.all.contains(entry.persistentID))
                        return true
                    }))
        }
        return sessions
    }

    @Test(arguments: [false, true])
    func L2_devicesConnectedHereAreOfferedTheMessageBeforeThePageIsWritten(settles: Bool) async throws {
        let world = try await Self.world(InMemoryStore())
        let tokens = try await world.subscribers(6, topics: ["news"]).sorted()
        let sessions = try await offering(tokens, world: world)
        // A page would wait half a minute for a device that does not answer.
        let settle = DeliveryPath.Settle(quiet: .seconds(30), limit: .seconds(60))
        let engine = world.engine(pageSize: 10, registry: sessions.registry, settle: settles ? settle : nil)
        await engine.submit(try await world.job("m1", .topic("news")))
        let started = ContinuousClock.now
        while try await engine.step() != nil {}
        #expect(sessions.offered.all.sorted() == Array(tokens.prefix(3)))
        // The declined entry is written and its session told.
        #expect(sessions.told.all == [tokens[2]])
        if settles {
            // Every offer was answered (the decline too): the page did not wait for a quiet spell.
            #expect(ContinuousClock.now - started < .seconds(20))
            // Acknowledged while the page waited: no row, nothing to delete, still delivered (L7).
            #expect(sessions.written.all.isEmpty)
            #expect(try await world.entriesPerToken(tokens) == [0, 0, 1, 1, 1, 1])
        } else {
            // The acknowledged rows go to the acknowledgement writer once written.
            #expect(sessions.written.all.sorted() == tokens.prefix(2).map { "m1#" + $0.prefix(22) }.sorted())
            #expect(try await world.entriesPerToken(tokens) == Array(repeating: 1, count: 6))
        }
        let day = CalendarDay(world.clock.now())
        let report = try await world.store.deliveryReport(
            projectID: world.project.id, appID: nil, from: day, through: day)
        #expect(report.reduce(0) { $0 + ($1[.delivered] ?? 0) } == (settles ? 2 : 0))
    }

    @Test func D2_anAcknowledgedEntryWithACollapseKeyIsStillWrittenToReplaceAnOlderOne() async throws {
        let world = try await Self.world(InMemoryStore())
        let tokens = try await world.subscribers(3, topics: ["news"]).sorted()
        let sessions = try await offering(tokens, world: world)
        let body = #"{"data":{"k":"v"},"android":{"collapse_key":"score"}}"#
        // An older "score" waits in every queue, stored while no device was connected.
        let offline = world.engine(pageSize: 10)
        var older = try await world.job("m0", .topic("news"))
        older.body = body
        offline.submit(older)
        while try await offline.step() != nil {}
        #expect(try await world.entriesPerToken(tokens) == [1, 1, 1])
        let engine = world.engine(pageSize: 10, registry: sessions.registry)
        var job = try await world.job("m1", .topic("news"))
        job.body = body
        engine.submit(job)
        while try await engine.step() != nil {}
        // Written, replacing the older one, then handed to the acknowledgement writer.
        #expect(sessions.written.all.sorted() == tokens.prefix(2).map { "m1#" + $0.prefix(22) }.sorted())
        for token in tokens {
            let registration = try #require(try await world.store.registration(token: token))
            let pending = try await world.store.pendingMessages(
                androidID: registration.androidID, after: 0, limit: 10, now: world.clock.now())
            #expect(pending.map(\.messageID) == ["m1"])
        }
    }

    @Test func T3_jobsPastTheFirstDeviceBudgetGoInTokenOrderOnly() async throws {
        let world = try await Self.world(InMemoryStore())
        let tokens = try await world.subscribers(12, topics: ["news"]).sorted()
        let online = Array(tokens.suffix(3))
        let (registry, told) = try await world.connected(online)
        // Room for one job's three devices, not for a second job's.
        let engine = world.engine(pageSize: 4, registry: registry, firstDeviceBudget: 5)
        await engine.submit(try await world.job("m1", .topic("news")))
        await engine.submit(try await world.job("m2", .topic("news")))
        try await engine.step()
        try await engine.step()
        let started = try await world.store.unfinishedFanouts()
        #expect(started.first { $0.messageID == "m1" }?.firstDevices.count == 3)
        #expect(started.first { $0.messageID == "m2" }?.firstDevices == [])
        while try await engine.step() != nil {}
        // Both reach every subscriber once: two entries per token, each device told twice.
        #expect(try await world.entriesPerToken(tokens) == Array(repeating: 2, count: 12))
        #expect(told.all.count == 6)
    }

    @Test func T3_anAudienceOnePageHoldsIsReachedInOnePageWithNothingStoredFirst() async throws {
        let world = try await Self.world(InMemoryStore())
        let tokens = try await world.subscribers(4, topics: ["news"]).sorted()
        // Many devices connected, two of them in the audience.
        let others = try await world.subscribers(6, topics: ["other"])
        let (registry, told) = try await world.connected([tokens[1], tokens[3]] + others)
        let engine = world.engine(pageSize: 5, registry: registry)
        await engine.submit(try await world.job("m1", .topic("news")))
        // One turn reaches every subscriber and ends the job.
        try await engine.step()
        #expect(try await world.entriesPerToken(tokens) == [1, 1, 1, 1])
        #expect(told.all.sorted() == [tokens[1], tokens[3]].sorted())
        #expect(try await world.store.unfinishedFanouts().isEmpty)
        #expect(try await engine.step() == nil)
    }

    @Test func T3_aJobPastItsFirstPageInPageOrderStaysInPageOrderAfterARestart() async throws {
        let world = try await Self.world(InMemoryStore())
        _ = try await world.subscribers(12, topics: ["news"])
        // In the order pages read them (by device, then token: `FanoutPosition`).
        let tokens = try await world.store.audience(
            projectID: "fanout-project", topics: ["news"], after: "", limit: 12
        ).map(\.token)
        #expect(tokens.count == 12)
        // No device connected: the job starts in page order and stores its first page.
        let before = world.engine(pageSize: 4)
        await before.submit(try await world.job("m1", .topic("news")))
        try await before.step()
        #expect(
            try await world.entriesPerToken(tokens) == Array(repeating: 1, count: 4) + Array(repeating: 0, count: 8))
        // After a restart, devices of that first page are connected: they must not get it again.
        let (registry, told) = try await world.connected(Array(tokens.prefix(3)) + [tokens[8]])
        let after = world.engine(pageSize: 4, registry: registry)
        try await after.resume()
        for _ in 0..<10 where try await after.step() != nil {}
        #expect(try await world.store.unfinishedFanouts().isEmpty)
        #expect(try await world.entriesPerToken(tokens) == Array(repeating: 1, count: 12))
        #expect(told.all == [tokens[8]])
    }

    @Test func T3_aJobThatEndsEarlyGivesBackItsFirstDevices() async throws {
        let world = try await Self.world(InMemoryStore())
        let tokens = try await world.subscribers(8, topics: ["news"]).sorted()
        let (registry, _) = try await world.connected(Array(tokens.suffix(3)))
        let gone = Mutex(false)
        let project = world.project
        let engine = FanoutEngine(
            store: world.store, clock: world.clock, metrics: HeraldMetrics(factory: PrometheusMetricsFactory()),
            path: registry, projects: { id in gone.withLock { $0 } || id != project.id ? nil : project },
            logger: Logger(label: "fanout-test"), pageSize: 2, firstDeviceBudget: 3)
        await engine.submit(try await world.job("m1", .topic("news")))
        try await engine.step()
        // Its project is deleted: the job ends at its next turn, and with it its hold on the budget.
        gone.withLock { $0 = true }
        try await engine.step()
        gone.withLock { $0 = false }
        await engine.submit(try await world.job("m2", .topic("news")))
        try await engine.step()
        let started = try await world.store.unfinishedFanouts()
        #expect(started.map(\.messageID) == ["m2"])
        #expect(started.first?.firstDevices.count == 3)
    }

    @Test func T3_aFanoutStoppedInItsFirstPassResumesWithoutReachingADeviceTwice() async throws {
        let directory = createdTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let world = try await Self.world(try SQLiteStore(dataDirectory: directory))
        let tokens = try await world.subscribers(20, topics: ["news"]).sorted()
        let online = stride(from: 1, to: 20, by: 3).map { tokens[$0] }
        let (registry, _) = try await world.connected(online)
        let before = world.engine(pageSize: 5, registry: registry)
        await before.submit(try await world.job("m1", .topic("news")))
        try await before.step()
        // The five devices reached acknowledge: their entries are gone from the store.
        var reached: [String] = []
        for token in online {
            let registration = try #require(try await world.store.registration(token: token))
            let pending = try await world.store.pendingMessages(
                androidID: registration.androidID, after: 0, limit: 10, now: world.clock.now())
            if !pending.isEmpty { reached.append(token) }
            _ = try await world.store.acknowledge(
                androidID: registration.androidID, persistentIDs: pending.map(\.persistentID))
        }
        #expect(reached.count == 5)
        // The process dies; a new one, with no device connected, opens the same database.
        let reopened = World(store: try SQLiteStore(dataDirectory: directory), project: world.project)
        let after = reopened.engine(pageSize: 5)
        try await after.resume()
        while try await after.step() != nil {}
        let counts = try await reopened.entriesPerToken(tokens)
        for (token, count) in zip(tokens, counts) {
            #expect(count == (reached.contains(token) ? 0 : 1), "\(token)")
        }
        #expect(try await reopened.store.unfinishedFanouts().isEmpty)
    }
}
