import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

func entry(
    _ id: String, token: String = "tok", collapseKey: String? = nil, high: Bool = false, app: String = "app",
    label: String = "", created: Int64 = 100, expires: Int64 = 10_000
) -> QueuedMessage {
    QueuedMessage(
        androidID: 42, token: token, persistentID: id, messageID: id, projectID: "alpha-project", stanza: [1],
        createdAt: Timestamp(seconds: created), expiresAt: Timestamp(seconds: expires), collapseKey: collapseKey,
        isHighPriority: high, appID: app, analyticsLabel: label, deletionSignalStanza: [9, 9])
}

/// Conformance for the delivery rules the store applies (SEMANTICS D1, D2, D5, L6, L7).
@Suite struct SemanticsStoreConformanceTests {
    let day = CalendarDay(Timestamp(seconds: 100))
    let limits = QueueLimits(maximumPending: 3, maximumCollapseKeys: 2)

    func prepared(_ backend: Backend) async throws -> any HeraldStore {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.createDevice(Device(androidID: 42, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        return store
    }

    func ids(_ store: any HeraldStore) async throws -> [String] {
        try await store.pendingMessages(androidID: 42, after: 0, limit: 100, now: Timestamp(seconds: 200)).map(
            \.persistentID)
    }

    func report(_ store: any HeraldStore) async throws -> DeliveryReportRow? {
        try await store.deliveryReport(projectID: "alpha-project", appID: "app", from: day, through: day).first
    }

    @Test(arguments: Backend.allCases)
    func D1_anOverflowDeletesTheQueueAndLeavesOneSignalWithTheCount(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        for id in ["a", "b", "c"] { try await store.appendMessages([], queue: [entry(id)], limits: limits, stats: []) }
        let decisions = try await store.appendMessages([], queue: [entry("d")], limits: limits, stats: [])
        #expect(decisions.first?.decision.deletionSignal == 4)
        let pending = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(pending.count == 1)
        #expect(pending[0].deletedCount == 4)
        #expect(pending[0].stanza == [9, 9])
        #expect(pending[0].persistentID.hasPrefix("deleted:"))
        #expect(try await report(store)?[.droppedTooManyPending] == 4)
        // The signal itself is not a message: acknowledging it counts nothing as delivered.
        try await store.acknowledge(androidID: 42, persistentIDs: [pending[0].persistentID])
        #expect(try await report(store)?[.delivered] == 0)
    }

    /// D1 counts an app instance's own queue, not its device's; a persistent id (what a
    /// device acknowledges by) is unique on the device, so an entry whose id the device
    /// has pending under any token, or twice in one batch, is refused with nothing stored.
    @Test(arguments: Backend.allCases)
    func D1_queuesAreAppInstancesAndPersistentIDsAreUniqueOnTheirDevice(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages(
            [], queue: [entry("a"), entry("x", token: "other"), entry("y", token: "other")], limits: limits, stats: [])
        let more = try await store.appendMessages([], queue: [entry("b"), entry("c")], limits: limits, stats: [])
        #expect(more.allSatisfy { $0.decision.deletionSignal == nil && $0.stored.count == 1 })
        await #expect(throws: StoreError.conflict("persistent id x")) {
            try await store.appendMessages([], queue: [entry("d"), entry("x")], limits: .unlimited, stats: [])
        }
        await #expect(throws: StoreError.conflict("persistent id e")) {
            try await store.appendMessages(
                [], queue: [entry("e"), entry("e", token: "other")], limits: .unlimited, stats: [])
        }
        #expect(try await ids(store) == ["a", "x", "y", "b", "c"])
    }

    @Test(arguments: Backend.allCases)
    func D2_collapsingAndKeyEvictionAreAppliedAndCounted(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        for (id, key) in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("n", nil), ("c1", "c")] {
            try await store.appendMessages([], queue: [entry(id, collapseKey: key)], limits: limits, stats: [])
        }
        // a2 replaced a1; c1 needed room, so the oldest key (b) went.
        #expect(try await ids(store) == ["a2", "n", "c1"])
        let row = try #require(try await report(store))
        #expect(row[.collapsed] == 1)
        #expect(row[.droppedTooManyPending] == 1)
        #expect(row.pending == 3)
    }

    /// D2 within one batch: an entry sees what the batch's earlier entries for its app
    /// instance stored, and only theirs (two app instances of one device, interleaved).
    @Test(arguments: Backend.allCases)
    func D2_anEntryCollapsesWhatAnEarlierEntryOfItsBatchStored(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let decisions = try await store.appendMessages(
            [],
            queue: [
                entry("a1", token: "t1", collapseKey: "k"), entry("b1", token: "t2", collapseKey: "k"),
                entry("a2", token: "t1", collapseKey: "k"), entry("a3", token: "t1"),
            ], limits: limits, stats: [])
        #expect(decisions.map(\.decision.delete.count) == [0, 0, 1, 0])
        #expect(try await ids(store) == ["b1", "a2", "a3"])
        #expect(try await report(store)?[.collapsed] == 1)
    }

    @Test(arguments: Backend.allCases)
    func queuesOfDifferentAppInstancesAreIndependent(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages(
            [], queue: [entry("x", token: "t1", collapseKey: "k")], limits: limits, stats: [])
        try await store.appendMessages(
            [], queue: [entry("y", token: "t2", collapseKey: "k")], limits: limits, stats: [])
        #expect(try await ids(store) == ["x", "y"])
    }

    @Test(arguments: Backend.allCases)
    func D4_aDozingDeviceIsOfferedOnlyHighPriorityMessages(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [entry("n1"), entry("h1", high: true), entry("n2")])
        let high = try await store.pendingHighPriorityMessages(
            androidID: 42, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(high.map(\.persistentID) == ["h1"])
    }

    @Test(arguments: Backend.allCases)
    func D5_expiredEntriesAreSweptAndCounted(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [entry("old", expires: 150), entry("new", expires: 500)])
        #expect(try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 100) == 1)
        #expect(try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 100) == 0)
        #expect(try await store.queuedCount(androidID: 42) == 1)
        #expect(try await report(store)?[.expired] == 1)
    }

    @Test(arguments: Backend.allCases)
    func D5_aSweepRemovesAtMostItsLimitOldestFirst(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages(
            [], queue: [entry("b", expires: 160), entry("a", expires: 150), entry("c", expires: 170)])
        #expect(try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 2) == 2)
        let left = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: Timestamp(seconds: 100))
        #expect(left.map(\.persistentID) == ["c"])
        #expect(try await report(store)?[.expired] == 2)
        #expect(try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 2) == 1)
        #expect(try await report(store)?[.expired] == 3)
    }

    @Test(arguments: Backend.allCases)
    func D5_messageRecordsPastTheirTTLAreSweptToo(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        var old = sampleMessage("old")
        old.expiresAt = Timestamp(seconds: 150)
        try await store.appendMessages([old, sampleMessage("current")])
        _ = try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 100)
        #expect(try await store.message(id: "old") == nil)
        #expect(try await store.message(id: "current") != nil)
    }

    @Test(arguments: Backend.allCases)
    func L6_deletingARegistrationDiscardsItsQueueAndKeepsATombstone(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.createRegistration(sampleRegistration("tok"))
        try await store.appendMessages([], queue: [entry("a"), entry("b")])
        // Looked up first, as a send does, so that a store remembering it must forget it.
        #expect(try await store.registration(token: "tok")?.deletedAt == nil)
        let deleted = try #require(try await store.deleteRegistration(token: "tok", at: Timestamp(seconds: 300)))
        #expect(deleted.deletedAt == Timestamp(seconds: 300))
        #expect(try await store.deleteRegistration(token: "tok", at: Timestamp(seconds: 301)) == nil)
        #expect(try await store.registration(token: "tok")?.deletedAt == Timestamp(seconds: 300))
        #expect(try await store.registrations(androidID: 42).isEmpty)
        #expect(try await store.queuedCount(androidID: 42) == 0)
        #expect(try await report(store)?[.unregistered] == 2)
    }

    @Test(arguments: Backend.allCases)
    func L7_countersAddUpPerKeyAndAcknowledgementsCountAsDelivered(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let key = DeliveryStatKey(projectID: "alpha-project", at: Timestamp(seconds: 100), appID: "app", label: "promo")
        try await store.appendMessages(
            [], queue: [entry("a", label: "promo"), entry("b", label: "promo")], limits: limits,
            stats: [DeliveryStat(key, .accepted, 2)])
        try await store.acknowledge(androidID: 42, persistentIDs: ["a"])
        try await store.record([DeliveryStat(key, .opened), DeliveryStat(key, .impressions, 3)])
        let rows = try await store.deliveryReport(projectID: "alpha-project", appID: nil, from: day, through: day)
        #expect(rows.count == 1)
        #expect(rows[0].key == key)
        #expect(rows[0][.accepted] == 2)
        #expect(rows[0][.delivered] == 1)
        #expect(rows[0][.opened] == 1)
        #expect(rows[0][.impressions] == 3)
        #expect(rows[0].pending == 1)
        let other = CalendarDay(Timestamp(seconds: 86_400 * 400))
        #expect(
            try await store.deliveryReport(projectID: "alpha-project", appID: nil, from: other, through: other).isEmpty)
        #expect(
            try await store.deliveryReport(projectID: "alpha-project", appID: "zzz", from: day, through: day).isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func L5_theLastConnectionIsRecorded(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        #expect(try await store.device(androidID: 42)?.lastConnectedAt == nil)
        try await store.recordConnection(androidID: 42, at: Timestamp(seconds: 77))
        #expect(try await store.device(androidID: 42)?.lastConnectedAt == Timestamp(seconds: 77))
    }
}

@Suite struct CalendarDayTests {
    @Test func daysAreUTCCalendarDates() {
        #expect(CalendarDay(Timestamp(seconds: 0)).description == "1970-01-01")
        #expect(CalendarDay(Timestamp(seconds: 951_782_400)).description == "2000-02-29")
        #expect(CalendarDay(Timestamp(seconds: 1_795_313_000)).description == "2026-11-22")
        #expect(CalendarDay(Timestamp(milliseconds: -1)).description == "1969-12-31")
        #expect(CalendarDay("2026-11-22") == CalendarDay(Timestamp(seconds: 1_795_313_000)))
        #expect(CalendarDay("0999-03-07")?.description == "0999-03-07")
        #expect(CalendarDay("12026-1-2")?.description == "12026-1-2")
    }
}
