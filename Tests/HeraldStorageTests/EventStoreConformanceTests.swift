import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Conformance for what became of every message (SEMANTICS E1–E4): events written with the
/// facts they describe, each message's counts and status, filters and retention.
@Suite struct EventStoreConformanceTests {
    /// A queue entry of `message` for the registration `token` names.
    func entry(
        _ store: any HeraldStore, token: String, message: String, persistentID: String? = nil,
        collapseKey: String? = nil, keepsEvents: Bool = true, expiresAt: Timestamp = Timestamp(seconds: 9000)
    ) async throws -> QueuedMessage {
        let registration = try #require(try await store.registration(token: token))
        return QueuedMessage(
            androidID: registration.androidID, token: token, persistentID: persistentID ?? message,
            messageID: message, projectID: "alpha-project", stanza: [1, 2, 3], createdAt: Timestamp(seconds: 2000),
            expiresAt: expiresAt, collapseKey: collapseKey, appID: registration.appID, analyticsLabel: "spring",
            keepsEvents: keepsEvents)
    }

    func tokenMessage(_ id: String, token: String, expiresAt: Timestamp = Timestamp(seconds: 9000)) -> StoredMessage {
        StoredMessage(
            id: id, projectID: "alpha-project", targetKind: .token, target: token, body: "{}",
            createdAt: Timestamp(seconds: 2000), expiresAt: expiresAt, analyticsLabel: "spring")
    }

    @Test(arguments: Backend.allCases)
    func E1_aMessageToOneAppInstanceIsAcceptedThenDeliveredAndItsStatusSaysDone(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.createProject(
            sampleProject("beta-project", number: 2), firstKey: sampleKey("k2", project: "beta-project"))
        let token = try await registeredToken(store, projectID: "alpha-project")
        let queued = try await entry(store, token: token, message: "m1")
        try await store.appendMessages(
            [tokenMessage("m1", token: token)], queue: [queued], limits: .unlimited,
            stats: [DeliveryStat(queued.statKey, .accepted)])
        let waiting = try #require(try await store.messageStatus(projectID: "alpha-project", messageID: "m1"))
        #expect(waiting.state(now: Timestamp(seconds: 2001)) == .delivering && waiting.waiting == 1)
        #expect(waiting.accepted.target == Registration.redacted(token) && waiting.accepted.targetKind == "token")
        try await store.acknowledge(androidID: queued.androidID, persistentIDs: ["m1"])
        let events = try await store.events(
            projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter(messageID: "m1"))
        #expect(events.map(\.type) == [.accepted, .delivered])
        #expect(events[1].token == Registration.redacted(token) && !events[1].token.contains(String(token.suffix(20))))
        #expect(events[1].appID == "com.example.app" && events[1].analyticsLabel == "spring")
        #expect(events[0].sequence < events[1].sequence && events[1].node == events[0].node)
        let done = try #require(try await store.messageStatus(projectID: "alpha-project", messageID: "m1"))
        #expect(done[.delivered] == 1 && done.waiting == 0 && done.state(now: Timestamp(seconds: 2001)) == .done)
        // Another project sees nothing of it.
        #expect(try await store.messageStatus(projectID: "beta-project", messageID: "m1") == nil)
        #expect(try await store.events(projectID: "beta-project", after: 0, limit: 10, filter: EventFilter()).isEmpty)
        #expect(try await store.latestEventSequence() == events[1].sequence)
    }

    @Test(arguments: Backend.allCases)
    func E2_aTopicsPerDeviceOutcomesAreCountedForTheMessageUnlessKeptEach(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        var tokens: [String] = []
        for _ in 0..<3 { tokens.append(try await registeredToken(store, projectID: "alpha-project")) }
        let message = sampleMessage("t1")
        try await store.createFanout(
            message,
            job: FanoutJob(
                messageID: "t1", projectID: "alpha-project", audience: .topic("news"), body: message.body,
                createdAt: message.createdAt, expiresAt: Timestamp(seconds: 9000)),
            stats: [])
        var entries: [QueuedMessage] = []
        for token in tokens {
            entries.append(try await entry(store, token: token, message: "t1", keepsEvents: false))
        }
        // The third app instance's entry is kept as events of its own (the project asked, say).
        entries[2].keepsEvents = true
        try await store.storeFanoutPage(
            messageID: "t1", queue: entries, firstDone: 0, cursor: "", reached: 3, done: true, limits: .unlimited,
            stats: [])
        try await store.acknowledge(batch: [entries[0].androidID: ["t1"], entries[1].androidID: ["t1"]])
        let status = try #require(try await store.messageStatus(projectID: "alpha-project", messageID: "t1"))
        #expect(status[.delivered] == 2 && status.instances == 3 && status.waiting == 1)
        #expect(status.fanout?.finished == true && status.state(now: Timestamp(seconds: 3000)) == .delivering)
        // Past its time to live, the last entry expires: the message's state says so.
        #expect(try await store.deleteExpired(now: Timestamp(seconds: 9000), limit: 100) == 1)
        let expired = try #require(try await store.messageStatus(projectID: "alpha-project", messageID: "t1"))
        #expect(expired[.expired] == 1 && expired.waiting == 0)
        #expect(expired.state(now: message.expiresAt.adding(seconds: -1)) == .done)
        #expect(expired.state(now: message.expiresAt) == .expired)
        let events = try await store.events(
            projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter(messageID: "t1"))
        #expect(events.map(\.type) == [.accepted, .expired] && events[1].reason == "D5")
        #expect(events[0].target == "news" && events[0].targetKind == "topic")
    }

    @Test(arguments: Backend.allCases)
    func E1_aCollapsedMessageIsAnEventOfItsOwnMessageAndFiltersAndRetentionApply(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        let token = try await registeredToken(store, projectID: "alpha-project")
        for id in ["c1", "c2"] {
            let queued = try await entry(store, token: token, message: id, collapseKey: "score")
            try await store.appendMessages(
                [tokenMessage(id, token: token)], queue: [queued], limits: .unlimited,
                stats: [DeliveryStat(queued.statKey, .accepted)])
        }
        let collapsed = try await store.events(
            projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter(types: [.collapsed]))
        #expect(collapsed.map(\.messageID) == ["c1"] && collapsed.first?.reason == "D2")
        #expect(try await store.messageStatus(projectID: "alpha-project", messageID: "c1")?[.collapsed] == 1)
        let all = try await store.events(projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter())
        #expect(all.map(\.type) == [.accepted, .accepted, .collapsed])
        #expect(
            try await store.events(projectID: "alpha-project", after: all[0].sequence, limit: 1, filter: EventFilter())
                .map(\.sequence) == [all[1].sequence])
        #expect(
            try await store.events(
                projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter(analyticsLabel: "other")
            ).isEmpty)
        // The accepted events are of the messages' time, the collapse of now.
        let now = SystemClock().now()
        #expect(try await store.deleteEvents(before: Timestamp(seconds: 2000), limit: 100) == 0)
        #expect(try await store.deleteEvents(before: Timestamp(seconds: 2001), limit: 100) == 2)
        #expect(try await store.deleteEvents(before: now.adding(seconds: 3600), limit: 100) == 1)
        #expect(try await store.events(projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter()).isEmpty)
    }
}
