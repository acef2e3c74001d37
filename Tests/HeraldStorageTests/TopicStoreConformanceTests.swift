import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Conformance for topic subscriptions, fanout jobs and device groups.
@Suite struct TopicStoreConformanceTests {
    func prepared(_ backend: Backend, tokens: [String]) async throws -> any HeraldStore {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.createDevice(Device(androidID: 42, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        for token in tokens { try await store.createRegistration(sampleRegistration(token)) }
        return store
    }

    func subscription(_ token: String, _ topic: String) -> TopicSubscription {
        TopicSubscription(projectID: "alpha-project", token: token, topic: topic, createdAt: Timestamp(seconds: 5))
    }

    @Test(arguments: Backend.allCases)
    func subscriptionsAreIdempotentAndLimited(_ backend: Backend) async throws {
        let store = try await prepared(backend, tokens: ["t1"])
        #expect(try await store.subscribe(subscription("t1", "a"), limit: 2))
        #expect(try await !store.subscribe(subscription("t1", "a"), limit: 2))
        #expect(try await store.subscribe(subscription("t1", "b"), limit: 2))
        await #expect(throws: StoreError.limit("topics per token")) {
            try await store.subscribe(subscription("t1", "c"), limit: 2)
        }
        #expect(try await store.subscriptions(token: "t1").map(\.topic) == ["a", "b"])
        #expect(try await store.topics(ofTokens: ["t1", "unknown"]) == ["t1": ["a", "b"]])
        #expect(try await store.unsubscribe(token: "t1", topic: "a"))
        #expect(try await !store.unsubscribe(token: "t1", topic: "a"))
    }

    /// T3: a page is short only when it is the last, as the engine reads it: an unregistered
    /// app instance keeps its subscriptions, and passing over it must not end the fanout.
    @Test(arguments: Backend.allCases)
    func T3_theAudienceIsReadInPagesOfLiveRegistrations(_ backend: Backend) async throws {
        let tokens = (0..<7).map { "t\($0)" }
        let store = try await prepared(backend, tokens: tokens)
        for token in tokens { _ = try await store.subscribe(subscription(token, "news"), limit: 10) }
        _ = try await store.subscribe(subscription("t0", "other"), limit: 10)
        _ = try await store.deleteRegistration(token: "t3", at: Timestamp(seconds: 9))
        func read(_ topics: [String]) async throws -> [String] {
            var seen: [String] = []
            var cursor = ""
            while true {
                let page = try await store.audience(projectID: "alpha-project", topics: topics, after: cursor, limit: 2)
                seen += page.map(\.token)
                guard let last = page.last, page.count == 2 else { return seen }
                cursor = FanoutPosition(cursor: cursor).advanced(past: last).cursor
            }
        }
        #expect(try await read(["news"]) == ["t0", "t1", "t2", "t4", "t5", "t6"])
        // A condition's topics: t0 is in both and comes once.
        #expect(try await read(["news", "other"]) == ["t0", "t1", "t2", "t4", "t5", "t6"])
        let everyone = try await store.audience(projectID: "alpha-project", topics: nil, after: "", limit: 100)
        #expect(everyone.map(\.token) == ["t0", "t1", "t2", "t4", "t5", "t6"])
        #expect(try await store.audience(projectID: "alpha-project", topics: ["nobody"], after: "", limit: 10).isEmpty)
    }

    /// T3: pages go by device (as stored: signed), then token, so that a page's queue rows
    /// fall together in the queue's device index; a cursor stored as a bare token, by a job
    /// from before that order, goes on in token order.
    @Test(arguments: Backend.allCases)
    func T3_pagesGoInDeviceOrderAndBareTokenCursorsInTokenOrder(_ backend: Backend) async throws {
        let store = try await prepared(backend, tokens: [])
        let high: UInt64 = .max - 1  // -2 as stored: the first device
        for id in [high, 5] {
            try await store.createDevice(Device(androidID: id, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        }
        let layout: [(String, UInt64)] = [("a1", 42), ("b1", high), ("c1", 5), ("d1", high), ("e1", 5), ("f1", 42)]
        for (token, device) in layout {
            try await store.createRegistration(sampleRegistration(token, device: device))
            _ = try await store.subscribe(subscription(token, token < "d" ? "news" : "sport"), limit: 10)
        }
        _ = try await store.subscribe(subscription("e1", "news"), limit: 10)
        func pages(_ topics: [String]?, from cursor: String = "") async throws -> [[String]] {
            var cursor = cursor
            var pages: [[String]] = []
            while true {
                let page = try await store.audience(projectID: "alpha-project", topics: topics, after: cursor, limit: 2)
                guard let last = page.last else { return pages }
                pages.append(page.map(\.token))
                cursor = FanoutPosition(cursor: cursor).advanced(past: last).cursor
            }
        }
        let byDevice = [["b1", "d1"], ["c1", "e1"], ["a1", "f1"]]
        #expect(try await pages(["news", "sport"]) == byDevice)
        #expect(try await pages(nil) == byDevice)
        #expect(try await pages(["news"]) == [["b1", "c1"], ["e1", "a1"]])
        #expect(try await pages(["news", "sport"], from: "c1") == [["d1", "e1"], ["f1"]])
        #expect(try await pages(nil, from: "c1") == [["d1", "e1"], ["f1"]])
        #expect(try await pages(["sport"], from: "d1") == [["e1", "f1"]])
    }

    @Test(arguments: Backend.allCases)
    func T3_theAudienceOnGivenDevicesIsReadByDevice(_ backend: Backend) async throws {
        let store = try await prepared(backend, tokens: ["t1", "t2", "t9"])
        for id: UInt64 in [7, .max - 3] {
            try await store.createDevice(Device(androidID: id, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        }
        try await store.createRegistration(sampleRegistration("u1", device: 7))
        try await store.createRegistration(sampleRegistration("u2", device: .max - 3))
        try await store.createRegistration(sampleRegistration("u3", device: .max - 3))
        for token in ["t1", "t2", "u1", "u2"] { _ = try await store.subscribe(subscription(token, "news"), limit: 10) }
        _ = try await store.subscribe(subscription("u3", "sport"), limit: 10)
        _ = try await store.deleteRegistration(token: "t2", at: Timestamp(seconds: 9))
        let onBoth = try await store.audience(projectID: "alpha-project", topics: ["news"], androidIDs: [42, .max - 3])
        #expect(onBoth.map(\.token) == ["t1", "u2"])
        let either = try await store.audience(
            projectID: "alpha-project", topics: ["news", "sport"], androidIDs: [.max - 3, 7])
        #expect(either.map(\.token) == ["u1", "u2", "u3"])
        let everyone = try await store.audience(projectID: "alpha-project", topics: nil, androidIDs: [42])
        #expect(everyone.map(\.token) == ["t1", "t9"])
        #expect(try await store.audience(projectID: "beta-project", topics: nil, androidIDs: [42]).isEmpty)
        #expect(try await store.audience(projectID: "alpha-project", topics: ["news"], androidIDs: []).isEmpty)
        #expect(try await store.audience(projectID: "alpha-project", topics: [], androidIDs: [42]).isEmpty)
    }

    /// Look-ups by a list of devices or tokens answer each match once, whatever the list's
    /// length (the SQLite store pads lists to a few sizes and splits them past 500).
    @Test(arguments: Backend.allCases)
    func T3_listsOfEveryLengthAreReadWhole(_ backend: Backend) async throws {
        let store = try await prepared(backend, tokens: [])
        let devices: [UInt64] = (1...777).map { 1_000 + $0 }
        for id in devices {
            try await store.createDevice(Device(androidID: id, securityToken: 1, createdAt: Timestamp(seconds: 1)))
            try await store.createRegistration(sampleRegistration("r\(id)", device: id))
            _ = try await store.subscribe(subscription("r\(id)", "news"), limit: 10)
        }
        for id in devices where id % 2 == 0 {
            try await store.recordConnection(androidID: id, at: Timestamp(seconds: 7))
        }
        for count in [1, 3, 5, 64, 300, 500, 501, 777] {
            let some = Array(devices.prefix(count))
            let connections = try await store.lastConnections(androidIDs: some)
            let connected = connections.compactMapValues { $0 }
            #expect(Set(connected.keys) == Set(some.filter { $0 % 2 == 0 }))
            #expect(connected.values.allSatisfy { $0 == Timestamp(seconds: 7) })
            let audience = try await store.audience(projectID: "alpha-project", topics: ["news"], androidIDs: some)
            #expect(audience.map(\.token) == some.map { "r\($0)" }.sorted())
            let topics = try await store.topics(ofTokens: some.map { "r\($0)" })
            #expect(topics.count == count && topics.values.allSatisfy { $0 == ["news"] })
        }
    }

    @Test(arguments: Backend.allCases)
    func fanoutPagesMoveTheCursorWithTheirQueueEntries(_ backend: Backend) async throws {
        let store = try await prepared(backend, tokens: ["t1"])
        let job = FanoutJob(
            messageID: "m1", projectID: "alpha-project", audience: .condition("'a' in topics"), body: "{}",
            createdAt: Timestamp(seconds: 100), expiresAt: Timestamp(seconds: 10_000))
        try await store.createFanout(sampleMessage("m1"), job: job, stats: [])
        #expect(try await store.unfinishedFanouts() == [job])
        #expect(try await store.startFanout(messageID: "m1", firstDevices: [42, .max]) == [42, .max])
        // A job already started keeps its first devices.
        #expect(try await store.startFanout(messageID: "m1", firstDevices: [7]) == [42, .max])
        try await store.storeFanoutPage(
            messageID: "m1", queue: [queued("m1#t1")], firstDone: 2, cursor: "", reached: 1, done: false,
            limits: .unlimited, stats: [])
        try await store.storeFanoutPage(
            messageID: "m1", queue: [], firstDone: 2, cursor: "t1", reached: 0, done: false, limits: .unlimited,
            stats: [])
        let resumed = try #require(try await store.unfinishedFanouts().first)
        #expect(resumed.firstDevices == [42, .max])
        #expect(resumed.firstDone == 2)
        #expect(resumed.cursor == "t1")
        #expect(resumed.delivered == 1)
        #expect(resumed.state == .running)
        #expect(try await store.queuedCount(androidID: 42) == 1)
        try await store.storeFanoutPage(
            messageID: "m1", queue: [], firstDone: 2, cursor: "t1", reached: 0, done: true, limits: .unlimited,
            stats: [])
        #expect(try await store.unfinishedFanouts().isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func deviceGroupsHaveUniqueNamesAndDisappearWithTheirLastMember(_ backend: Backend) async throws {
        let store = try await prepared(backend, tokens: ["t1", "t2"])
        let group = DeviceGroup(
            projectID: "alpha-project", name: "family", notificationKey: "key-1", members: ["t1", "t2"])
        try await store.createDeviceGroup(group)
        await #expect(throws: StoreError.self) {
            try await store.createDeviceGroup(
                DeviceGroup(projectID: "alpha-project", name: "family", notificationKey: "key-2", members: ["t1"]))
        }
        #expect(try await store.deviceGroup(projectID: "alpha-project", name: "family", notificationKey: nil) == group)
        #expect(try await store.deviceGroup(projectID: "alpha-project", name: nil, notificationKey: "key-1") == group)
        #expect(try await store.deviceGroup(projectID: "beta", name: "family", notificationKey: nil) == nil)
        try await store.updateDeviceGroup(projectID: "alpha-project", notificationKey: "key-1", members: ["t2"])
        #expect(
            try await store.deviceGroup(projectID: "alpha-project", name: "family", notificationKey: nil)?.members == [
                "t2"
            ])
        try await store.updateDeviceGroup(projectID: "alpha-project", notificationKey: "key-1", members: [])
        #expect(try await store.deviceGroup(projectID: "alpha-project", name: "family", notificationKey: nil) == nil)
    }

    @Test(arguments: Backend.allCases)
    func aProjectsTopicsAreListedByNameWithTheirSubscribersCountedUpToALimit(_ backend: Backend) async throws {
        let tokens = (0..<5).map { "t\($0)" }
        let store = try await prepared(backend, tokens: tokens)
        for token in tokens { _ = try await store.subscribe(subscription(token, "news"), limit: 10) }
        for token in tokens.prefix(2) { _ = try await store.subscribe(subscription(token, "alerts"), limit: 10) }
        _ = try await store.subscribe(subscription("t4", "weather"), limit: 10)
        let sizes = try await store.topicSizes(projectID: "alpha-project", limit: 10, countingUpTo: 3)
        #expect(sizes.map(\.topic) == ["alerts", "news", "weather"] && sizes.map(\.subscribers) == [2, 3, 1])
        #expect(
            try await store.topicSizes(projectID: "alpha-project", limit: 2, countingUpTo: 10).map(\.subscribers) == [
                2, 5,
            ])
        #expect(try await store.topicSizes(projectID: "other-project", limit: 10, countingUpTo: 10).isEmpty)
        for name in ["zulu", "alpha"] {
            try await store.createDeviceGroup(
                DeviceGroup(
                    projectID: "alpha-project", name: name, notificationKey: "key-\(name)", members: ["t1", "t2"]))
        }
        let groups = try await store.deviceGroups(projectID: "alpha-project", limit: 10)
        #expect(groups.map(\.name) == ["alpha", "zulu"] && groups.first?.members == ["t1", "t2"])
        #expect(try await store.deviceGroups(projectID: "alpha-project", limit: 1).count == 1)
        // T7: counted up to a bound, per project.
        #expect(try await store.deviceGroupCount(projectID: "alpha-project", countingUpTo: 10) == 2)
        #expect(try await store.deviceGroupCount(projectID: "alpha-project", countingUpTo: 1) == 1)
        #expect(try await store.deviceGroupCount(projectID: "other-project", countingUpTo: 10) == 0)
    }
}
