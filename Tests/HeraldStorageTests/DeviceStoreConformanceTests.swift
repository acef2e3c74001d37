import HeraldCore
import HeraldStorage
import Testing

func sampleRegistration(_ token: String, device: UInt64 = 42, project: String? = "alpha-project") -> Registration {
    Registration(
        token: token, kind: project == nil ? .webChannel : .app, projectID: project, sender: "123456789012",
        appID: "com.example.app", subtype: "wp:sub", platform: .web, androidID: device, installationID: "fid-1",
        webKeys: WebPushKeys(p256dh: [4, 1, 2], auth: [9, 9], coding: "aesgcm"), createdAt: Timestamp(seconds: 10))
}

func queued(_ id: String, device: UInt64 = 42, expires: Int64 = 10_000) -> QueuedMessage {
    QueuedMessage(
        androidID: device, token: "tok", persistentID: id, messageID: id, projectID: "alpha-project",
        stanza: [1, 2, 3],
        createdAt: Timestamp(seconds: 100), expiresAt: Timestamp(seconds: expires))
}

/// Conformance for devices, registrations, installations and device queues.
@Suite struct DeviceStoreConformanceTests {
    func prepared(_ backend: Backend) async throws -> any HeraldStore {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.createDevice(Device(androidID: 42, securityToken: .max, createdAt: Timestamp(seconds: 1)))
        return store
    }

    @Test(arguments: Backend.allCases)
    func devicesKeepTheirFull64BitIdentity(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let big = Device(androidID: .max - 1, securityToken: .max, createdAt: Timestamp(seconds: 2))
        try await store.createDevice(big)
        #expect(try await store.device(androidID: .max - 1) == big)
        #expect(try await store.device(androidID: 7) == nil)
        await #expect(throws: StoreError.self) { try await store.createDevice(big) }
    }

    @Test(arguments: Backend.allCases)
    func registrationsAreFoundByTokenDeviceAndInstallation(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let registration = sampleRegistration("t1")
        try await store.createRegistration(registration)
        try await store.createRegistration(sampleRegistration("t0", project: nil))
        #expect(try await store.registration(token: "t1") == registration)
        #expect(try await store.registration(installationID: "fid-1", projectID: "alpha-project") == registration)
        #expect(try await store.registration(installationID: "fid-1", projectID: "beta") == nil)
        #expect(try await store.registrations(androidID: 42).map(\.token) == ["t0", "t1"])
        await #expect(throws: StoreError.self) { try await store.createRegistration(registration) }
        await #expect(throws: StoreError.self) {
            try await store.createRegistration(sampleRegistration("t2", device: 99))
        }
        await #expect(throws: StoreError.self) {
            try await store.createRegistration(sampleRegistration("t3", project: "no-such-project"))
        }
    }

    @Test(arguments: Backend.allCases)
    func installationsAreSavedPerProject(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let installation = Installation(
            fid: "f", projectID: "alpha-project", appID: "1:2:web:3", refreshToken: "r",
            createdAt: Timestamp(seconds: 5))
        try await store.saveInstallation(installation)
        #expect(try await store.installation(fid: "f", projectID: "alpha-project") == installation)
        var renewed = installation
        renewed.refreshToken = "r2"
        try await store.saveInstallation(renewed)
        #expect(try await store.installation(fid: "f", projectID: "alpha-project")?.refreshToken == "r2")
    }

    @Test(arguments: Backend.allCases)
    func L4_queuedMessagesComeBackInOrderUntilAcknowledged(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [queued("a"), queued("b")])
        try await store.appendMessages([], queue: [queued("c"), queued("x", device: 43)])
        let now = Timestamp(seconds: 200)
        let all = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: now)
        #expect(all.map(\.persistentID) == ["a", "b", "c"])
        #expect(all.map(\.sequence) == all.map(\.sequence).sorted())
        #expect(all[0].stanza == [1, 2, 3])
        let page = try await store.pendingMessages(androidID: 42, after: all[0].sequence, limit: 1, now: now)
        #expect(page.map(\.persistentID) == ["b"])
        #expect(try await store.acknowledge(androidID: 42, persistentIDs: ["a", "c", "zzz"]) == 2)
        #expect(try await store.acknowledge(androidID: 43, persistentIDs: ["b"]) == 0)
        #expect(
            try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: now).map(\.persistentID) == ["b"])
        #expect(try await store.queuedCount(androidID: 43) == 1)
    }

    @Test(arguments: Backend.allCases)
    func D5_expiredQueueEntriesAreNotHandedOut(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [queued("old", expires: 150), queued("new", expires: 500)])
        let pending = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(pending.map(\.persistentID) == ["new"])
    }

    @Test(arguments: Backend.allCases)
    func aDuplicatePersistentIDOnOneDeviceFailsTheWholeAppend(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [queued("a")])
        await #expect(throws: StoreError.self) {
            try await store.appendMessages([sampleMessage("m9")], queue: [queued("b"), queued("a")])
        }
        #expect(try await store.message(id: "m9") == nil)
        #expect(try await store.queuedCount(androidID: 42) == 1)
    }

    @Test(arguments: Backend.allCases)
    func deletingAProjectRemovesItsRegistrationsAndQueues(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.createRegistration(sampleRegistration("t1"))
        try await store.appendMessages([], queue: [queued("a")])
        _ = try await store.deleteProject(id: "alpha-project")
        #expect(try await store.registration(token: "t1") == nil)
        #expect(try await store.queuedCount(androidID: 42) == 0)
    }
}
