import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStorage

/// Group commit on PostgreSQL: appends that arrive while a batch is written share the next.
@Suite(.enabled(if: TestPostgres.location != nil, "needs PostgreSQL: run scripts/test (sets HERALD_TEST_POSTGRES)"))
struct PostgresBatchTests {
    @Test func appendsThatArriveTogetherShareTransactions() async throws {
        let store = try await TestPostgres.store("batch-node")
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await store.createDevice(Device(androidID: 42, securityToken: .max, createdAt: Timestamp(seconds: 1)))
        let calls = 64
        let before = store.appends.batches.load(ordering: .relaxed)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<calls {
                group.addTask {
                    let entry = QueuedMessage(
                        androidID: 42, token: "tok", persistentID: "q\(index)", messageID: "m\(index)",
                        projectID: "alpha-project", stanza: [1], createdAt: Timestamp(seconds: 100),
                        expiresAt: Timestamp(seconds: 10_000))
                    try await store.appendMessages(
                        [sampleMessage("m\(index)")], queue: [entry], limits: .unlimited, stats: [])
                }
            }
            try await group.waitForAll()
        }
        let batches = store.appends.batches.load(ordering: .relaxed) - before
        #expect(try await store.queuedCount(androidID: 42) == calls)
        // The first call writes alone; the others arrive while it is written.
        #expect(batches < calls / 4, "\(calls) appends took \(batches) batches")
    }
}
