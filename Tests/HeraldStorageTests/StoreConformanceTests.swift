import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// The backends every conformance test runs against: PostgreSQL only when the test
/// command started one (`scripts/with-postgres` sets `HERALD_TEST_POSTGRES`).
enum Backend: String, CaseIterable, CustomTestStringConvertible {
    case memory
    case sqlite
    case postgres

    static var allCases: [Backend] {
        TestPostgres.location != nil ? [.memory, .sqlite, .postgres] : [.memory, .sqlite]
    }

    var testDescription: String { rawValue }

    func makeStore() async throws -> any HeraldStore {
        switch self {
        case .memory: return InMemoryStore()
        case .sqlite: return try SQLiteStore(dataDirectory: createdTemporaryDirectory())
        case .postgres: return try await TestPostgres.store("test-node")
        }
    }
}

/// The `HeraldStore` conformance suite: every backend must pass every test.
@Suite struct StoreConformanceTests {
    @Test(arguments: Backend.allCases)
    func createsAndReadsProjects(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        let project = sampleProject()
        try await store.createProject(project, firstKey: sampleKey("k1"))
        #expect(try await store.project(id: project.id) == project)
        #expect(try await store.project(id: "missing") == nil)
        try await store.createProject(
            sampleProject("beta-project", number: 2), firstKey: sampleKey("k2", project: "beta-project"))
        #expect(try await store.projects().map(\.id) == ["alpha-project", "beta-project"])
    }

    @Test(arguments: Backend.allCases)
    func refusesDuplicateIDsNumbersAndKeysAndChangesNothing(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        await #expect(throws: StoreError.self) {
            try await store.createProject(sampleProject(), firstKey: sampleKey("k9"))
        }
        await #expect(throws: StoreError.self) {
            try await store.createProject(
                sampleProject("other-project"), firstKey: sampleKey("k8", project: "other-project"))
        }
        await #expect(throws: StoreError.self) {
            try await store.createProject(
                sampleProject("third-project", number: 7), firstKey: sampleKey("k1", project: "third-project"))
        }
        #expect(try await store.projects().count == 1)
        #expect(try await store.serviceAccountKey(id: "k9") == nil)
        #expect(try await store.project(id: "third-project") == nil)
    }

    @Test(arguments: Backend.allCases)
    func keysAreAddedListedAndRevoked(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.addServiceAccountKey(sampleKey("k2", at: 2000))
        await #expect(throws: StoreError.self) {
            try await store.addServiceAccountKey(sampleKey("k3", project: "nope"))
        }
        await #expect(throws: StoreError.self) { try await store.addServiceAccountKey(sampleKey("k2")) }
        #expect(try await store.serviceAccountKeys(projectID: "alpha-project").map(\.id) == ["k1", "k2"])
        #expect(try await store.revokeServiceAccountKey(id: "k1", at: Timestamp(seconds: 3000)))
        #expect(try await !store.revokeServiceAccountKey(id: "k1", at: Timestamp(seconds: 4000)))
        #expect(try await !store.revokeServiceAccountKey(id: "missing", at: Timestamp(seconds: 4000)))
        let revoked = try #require(try await store.serviceAccountKey(id: "k1"))
        #expect(revoked.revokedAt == Timestamp(seconds: 3000))
        #expect(!revoked.isActive)
        #expect(try await store.allServiceAccountKeys().map(\.id) == ["k1", "k2"])
    }

    @Test(arguments: Backend.allCases)
    func theCredentialsRevisionMovesOnEveryCredentialChange(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        var last = try await store.credentialsRevision()
        func expectMoved() async throws {
            let now = try await store.credentialsRevision()
            #expect(now != last)
            last = now
        }
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await expectMoved()
        try await store.addServiceAccountKey(sampleKey("k2"))
        try await expectMoved()
        _ = try await store.revokeServiceAccountKey(id: "k2", at: Timestamp(seconds: 1))
        try await expectMoved()
        var settings = ProjectSettings()
        settings.maxPending = 5
        #expect(try await store.updateSettings(settings, projectID: "alpha-project"))
        try await expectMoved()
        #expect(try await store.project(id: "alpha-project")?.settings.maxPending == 5)
        #expect(try await !store.updateSettings(settings, projectID: "missing"))
        _ = try await store.deleteProject(id: "alpha-project")
        try await expectMoved()
    }

    @Test(arguments: Backend.allCases)
    func deletingAProjectDeletesItsKeysAndMessages(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.appendMessages([sampleMessage("m1")])
        #expect(try await store.deleteProject(id: "alpha-project"))
        #expect(try await !store.deleteProject(id: "alpha-project"))
        #expect(try await store.serviceAccountKey(id: "k1") == nil)
        #expect(try await store.message(id: "m1") == nil)
        #expect(try await store.messageCount(projectID: "alpha-project") == 0)
    }

    @Test(arguments: Backend.allCases)
    func secretsAreMadeOnceAndKept(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        let first = try await store.secret(named: "s") { [1, 2, 3] }
        let second = try await store.secret(named: "s") { [9, 9, 9] }
        #expect(first == [1, 2, 3])
        #expect(second == [1, 2, 3])
        #expect(try await store.secret(named: "t") { [4] } == [4])
    }

    @Test(arguments: Backend.allCases)
    func L7_aMessageKeepsItsAnalyticsLabelForItsReceipts(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        var labelled = sampleMessage("m1")
        labelled.analyticsLabel = "spring-sale"
        try await store.appendMessages([labelled])
        let fanout = sampleMessage("f1")
        try await store.createFanout(
            fanout,
            job: FanoutJob(
                messageID: "f1", projectID: fanout.projectID, audience: .topic("news"), body: fanout.body,
                createdAt: fanout.createdAt, expiresAt: fanout.expiresAt), stats: [])
        #expect(try await store.message(id: "m1")?.analyticsLabel == "spring-sale")
        #expect(try await store.message(id: "f1")?.analyticsLabel == "")
    }

    @Test(arguments: Backend.allCases)
    func messagesAreAppendedAllOrNone(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.appendMessages([sampleMessage("m1"), sampleMessage("m2")])
        #expect(try await store.message(id: "m1") == sampleMessage("m1"))
        #expect(try await store.messageCount(projectID: "alpha-project") == 2)
        await #expect(throws: StoreError.self) {
            try await store.appendMessages([sampleMessage("m3"), sampleMessage("m1")])
        }
        await #expect(throws: StoreError.self) {
            try await store.appendMessages([sampleMessage("m4", project: "no-such-project")])
        }
        #expect(try await store.message(id: "m3") == nil)
        #expect(try await store.messageCount(projectID: "alpha-project") == 2)
    }
}

@Suite struct SQLiteDurabilityTests {
    @Test func aReopenedDatabaseHoldsEverythingThatWasCommitted() async throws {
        let directory = createdTemporaryDirectory()
        do {
            let store = try SQLiteStore(dataDirectory: directory)
            try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
            try await store.appendMessages([sampleMessage("m1")])
            _ = try await store.secret(named: "s") { [7] }
        }
        let reopened = try SQLiteStore(dataDirectory: directory)
        #expect(try await reopened.project(id: "alpha-project") == sampleProject())
        #expect(try await reopened.message(id: "m1") == sampleMessage("m1"))
        #expect(try await reopened.secret(named: "s") { [8] } == [7])
    }

    @Test func twoStoresOnOneDirectorySeeEachOthersChanges() async throws {
        // The CLI and a running server open the same data directory.
        let directory = createdTemporaryDirectory()
        let server = try SQLiteStore(dataDirectory: directory)
        let cli = try SQLiteStore(dataDirectory: directory)
        let before = try await server.credentialsRevision()
        try await cli.createProject(sampleProject(), firstKey: sampleKey("k1"))
        #expect(try await server.credentialsRevision() != before)
        #expect(try await server.project(id: "alpha-project") != nil)
    }
}
