import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStorage

/// Writes that create background work wake its workers once committed, on every store that
/// gives signals; looks that find nothing wake nobody, so idle workers do not wake each other.
@Suite struct WorkSignalsConformanceTests {
    static var backends: [Backend] { Backend.allCases.filter { $0 != .memory } }

    /// A store whose signals are heard (on PostgreSQL one that listens, once it listens), with
    /// the project `alpha-project`, whose creation woke the credential refresher.
    func listeningStore(_ backend: Backend) async throws -> (any HeraldStore, WorkSignals) {
        let store: any HeraldStore =
            backend == .postgres
            ? try await TestPostgres.store("work-node", listening: true) : try await backend.makeStore()
        let work = try #require(store.work)
        // Starting to listen wakes every worker, for what was missed: after that, only writes do.
        if backend == .postgres {
            let mark: UInt64 = 0
            await work[.scheduled].wait(after: mark, upTo: .seconds(60))
            #expect(work[.scheduled].mark() > 0, "the store did not start listening")
        }
        #expect(
            try await wakes(.credentials, work) {
                try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
            })
        return (store, work)
    }

    /// Answers whether `write` woke the workers of `kind` within a minute (at once, unless the
    /// whole suite holds the test process's threads).
    func wakes(_ kind: WorkSignals.Work, _ work: WorkSignals, _ write: () async throws -> Void) async throws -> Bool {
        let mark = work[kind].mark()
        try await write()
        await work[kind].wait(after: mark, upTo: .seconds(60))
        return work[kind].mark() != mark
    }

    @Test(arguments: backends)
    func writesThatCreateWorkWakeItsWorkers(_ backend: Backend) async throws {
        let (store, work) = try await listeningStore(backend)
        try await store.createDevice(Device(androidID: 42, securityToken: .max, createdAt: Timestamp(seconds: 1)))
        #expect(
            try await wakes(.scheduled, work) {
                try await store.addScheduledSend(
                    ScheduledSend(
                        id: "s1", projectID: "alpha-project", messageID: "m-later", body: "{}", summary: "later",
                        dueAt: Timestamp(seconds: 5_000), createdBy: "ada", createdAt: Timestamp(seconds: 1_000)))
            })
        #expect(try await wakes(.events, work) { try await store.appendMessages([sampleMessage("m1")]) })
        // Android ids below `Device.handOffIDs.upperBound` are app instances of another push service.
        let entry = QueuedMessage(
            androidID: 42, token: "tok", persistentID: "q1", messageID: "m2", projectID: "alpha-project",
            stanza: [1], createdAt: Timestamp(seconds: 100), expiresAt: Timestamp(seconds: 10_000))
        #expect(
            try await wakes(.handOffs, work) {
                try await store.appendMessages([sampleMessage("m2")], queue: [entry], limits: .unlimited, stats: [])
            })
    }

    @Test(arguments: backends)
    func looksThatFindNothingWakeNobody(_ backend: Backend) async throws {
        // The project's notice was heard before the looks begin.
        let (store, work) = try await listeningStore(backend)
        let marks = WorkSignals.Work.allCases.map { work[$0].mark() }
        let now = Timestamp(seconds: 10_000)
        _ = try await store.claimDueSends(now: now, until: now.adding(seconds: 10), limit: 10)
        _ = try await store.nextClaimableSend()
        _ = try await store.claimHandOffs(limit: 10, now: now, until: now.adding(seconds: 10))
        _ = try await store.claimDueWebhooks(now: now, until: now.adding(seconds: 60), holder: "work-node", limit: 10)
        _ = try await store.events(after: 0, limit: 10)
        _ = try await store.credentialsRevision()
        try await Task.sleep(for: .milliseconds(300))
        #expect(WorkSignals.Work.allCases.map { work[$0].mark() } == marks)
    }
}
