import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Conformance for hand-offs to APNs: registrations with an APNs address, and claims of
/// their devices' queue entries.
@Suite struct HandOffStoreConformanceTests {
    static let address = APNsAddress(deviceToken: String(repeating: "ab", count: 32), isSandbox: true)!

    /// A store with an Apple app instance reached through APNs (device 7, token `apple`) and
    /// an Android one on device 42 (token `tok`), both of the sample project.
    func prepared(_ backend: Backend) async throws -> any HeraldStore {
        let store = try await storeWithDevice(backend)
        try await store.createDevice(Device(androidID: 7, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        try await store.createRegistration(
            Registration(
                token: "apple", kind: .app, projectID: "alpha-project", sender: "123456789012",
                appID: "com.example.ios",
                subtype: nil, platform: .apple, androidID: 7, apns: Self.address, createdAt: Timestamp(seconds: 10)))
        var android = sampleRegistration("tok")
        android.platform = .android
        try await store.createRegistration(android)
        return store
    }

    func entry(_ id: String, device: UInt64 = 7, token: String = "apple", expires: Int64 = 10_000) -> QueuedMessage {
        var entry = queued(id, device: device, expires: expires)
        entry.token = token
        return entry
    }

    @Test(arguments: Backend.allCases)
    func anAPNsAddressIsStoredAndFound(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        #expect(try await store.registration(token: "apple")?.apns == Self.address)
        #expect(try await store.registration(token: "tok")?.apns == nil)
        #expect(try await store.registration(apns: Self.address, projectID: "alpha-project")?.token == "apple")
        #expect(try await store.registration(apns: Self.address, projectID: "beta") == nil)
        let production = APNsAddress(deviceToken: Self.address.deviceToken, isSandbox: false)!
        #expect(try await store.registration(apns: production, projectID: "alpha-project") == nil)
        _ = try await store.deleteRegistration(token: "apple", at: Timestamp(seconds: 20))
        #expect(try await store.registration(apns: Self.address, projectID: "alpha-project") == nil)
    }

    /// Only due, unexpired entries of devices reached through APNs are claimed, oldest first;
    /// a claim holds them until it runs out, and a deferral moves them.
    @Test(arguments: Backend.allCases)
    func claimsTakeDueEntriesOnceUntilTheyRunOut(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages(
            [], queue: [entry("a1"), entry("a2"), entry("old", expires: 150), entry("droid", device: 42, token: "tok")])
        let now = Timestamp(seconds: 200)
        let claimed = try await store.claimHandOffs(limit: 10, now: now, until: now.adding(seconds: 30))
        #expect(claimed.map(\.entry.persistentID) == ["a1", "a2"])
        #expect(claimed.allSatisfy { $0.destination == .apns(Self.address) && $0.entry.stanza == [1, 2, 3] })
        #expect(try await store.claimHandOffs(limit: 10, now: now.adding(seconds: 29), until: now).isEmpty)
        let again = try await store.claimHandOffs(
            limit: 1, now: now.adding(seconds: 30), until: now.adding(seconds: 60))
        #expect(again.map(\.entry.persistentID) == ["a1"])
        try await store.deferHandOffs([again[0].entry.sequence], to: now.adding(seconds: 100))
        #expect(
            try await store.claimHandOffs(limit: 10, now: now.adding(seconds: 60), until: now.adding(seconds: 90))
                .map(\.entry.persistentID) == ["a2"])
        // Delivered: acknowledged like any entry, and never claimed again.
        _ = try await store.acknowledge(batch: [7: ["a1", "a2"]])
        #expect(try await store.claimHandOffs(limit: 10, now: now.adding(seconds: 500), until: now).isEmpty)
        #expect(try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: now).count == 1)
    }

    /// Claims made at once (two nodes' on PostgreSQL) never take the same entry.
    @Test(arguments: Backend.allCases)
    func concurrentClaimsTakeEachEntryOnce(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: (0..<200).map { entry("m\($0)") })
        let now = Timestamp(seconds: 200)
        async let first = store.claimHandOffs(limit: 120, now: now, until: now.adding(seconds: 30))
        async let second = store.claimHandOffs(limit: 120, now: now, until: now.adding(seconds: 30))
        let (a, b) = try await (first, second)
        let ids = (a + b).map(\.entry.persistentID)
        #expect(ids.count == 200 && Set(ids).count == 200)
    }

    /// A device in the hand-off range that no APNs registration names is never handed off.
    @Test(arguments: Backend.allCases)
    func entriesOfAnotherRegistrationOnAHandOffDeviceAreNotClaimed(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [entry("odd", token: "tok")])
        let now = Timestamp(seconds: 200)
        #expect(try await store.claimHandOffs(limit: 10, now: now, until: now.adding(seconds: 30)).isEmpty)
        #expect(try await store.claimHandOffs(limit: 10, now: now.adding(seconds: 60), until: now).isEmpty)
    }
}
