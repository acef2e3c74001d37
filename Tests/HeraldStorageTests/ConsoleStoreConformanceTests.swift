import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Conformance for the console's users and its session values.
@Suite struct ConsoleStoreConformanceTests {
    @Test(arguments: Backend.allCases)
    func aUserIsKeptWithTheirProjectsAndReplacedByName(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        #expect(try await store.consoleUser(name: "ada") == nil)
        let ada = ConsoleUser(
            name: "ada", passwordHash: "$2b$12$hash", isAdmin: false, projectIDs: ["beta-one", "alpha-one"],
            createdAt: Timestamp(seconds: 5))
        try await store.saveConsoleUser(ada)
        try await store.saveConsoleUser(
            ConsoleUser(
                name: "root", passwordHash: "$2b$12$other", isAdmin: true, projectIDs: [],
                createdAt: Timestamp(seconds: 1)))
        let kept = try #require(try await store.consoleUser(name: "ada"))
        #expect(kept == ada && kept.projectIDs == ["alpha-one", "beta-one"])
        #expect(kept.mayOpen(projectID: "alpha-one") && !kept.mayOpen(projectID: "gamma-one"))
        var changed = ada
        changed.passwordHash = "$2b$12$new"
        changed.projectIDs = ["gamma-one"]
        try await store.saveConsoleUser(changed)
        #expect(try await store.consoleUsers().map(\.name) == ["ada", "root"])
        #expect(try await store.consoleUser(name: "ada") == changed)
        #expect(try await store.consoleUser(name: "root")?.mayOpen(projectID: "anything-at-all") == true)
    }

    @Test(arguments: Backend.allCases)
    func aValueLivesUntilItExpiresAndIsCreatedOnlyOnceUnlessReplaced(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        let now = Timestamp(seconds: 1_000)
        #expect(
            try await store.putConsoleValue(
                key: "s1", value: [1, 2], expiresAt: now.adding(seconds: 60), replacing: false, now: now))
        #expect(
            try await store.putConsoleValue(
                key: "s1", value: [9], expiresAt: now.adding(seconds: 60), replacing: false, now: now) == false)
        #expect(try await store.consoleValue(key: "s1", now: now)?.value == [1, 2])
        try await store.putConsoleValue(key: "s1", value: [3], expiresAt: nil, replacing: true, now: now)
        let replaced = try await store.consoleValue(key: "s1", now: now.adding(seconds: 1_000_000))
        #expect(replaced?.value == [3] && replaced?.expiresAt == nil)
        try await store.putConsoleValue(
            key: "s2", value: [4], expiresAt: now.adding(seconds: 10), replacing: true, now: now)
        #expect(try await store.consoleValue(key: "s2", now: now.adding(seconds: 10)) == nil)
        // An expired value does not stop a new one under its key.
        #expect(
            try await store.putConsoleValue(
                key: "s2", value: [5], expiresAt: now.adding(seconds: 30), replacing: false,
                now: now.adding(seconds: 11)))
        #expect(try await store.deleteExpiredConsoleValues(now: now.adding(seconds: 31), limit: 10) == 1)
        #expect(try await store.consoleValue(key: "s2", now: now) == nil)
        try await store.removeConsoleValue(key: "s1")
        #expect(try await store.consoleValue(key: "s1", now: now) == nil)
    }
}
