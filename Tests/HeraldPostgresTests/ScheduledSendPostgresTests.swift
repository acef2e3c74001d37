import HeraldConsole
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Scheduled sends with two nodes over one PostgreSQL database: each is sent by one of
/// them, exactly once, and a send whose claimant stopped is taken over.
@Suite(.enabled(if: TestPostgres.location != nil, "needs PostgreSQL: run scripts/test"))
struct ScheduledSendPostgresTests {
    /// Two nodes over one PostgreSQL database, sharing a clock and a project.
    static func twoPostgresNodes() async throws -> (TestServer, TestServer) {
        let storeA = try await TestPostgres.store("node-a")
        let storeB = try await TestPostgres.store("node-b", sharing: storeA)
        let a = try await TestServer.make(store: storeA)
        let nodeB = try await TestServer.node(store: storeB, clock: a.clock)
        let b = TestServer(
            store: storeB, clock: a.clock, node: nodeB, project: a.project, key: a.key, privateKey: a.privateKey)
        try await b.node.directory.reload(from: storeB)
        return (a, b)
    }

    @Test
    func twoNodesOnPostgresSendEachScheduledSendExactlyOnce() async throws {
        let (a, b) = try await Self.twoPostgresNodes()
        for index in 0..<30 {
            try await a.store.addScheduledSend(ScheduledSends.scheduled(a, "s\(index)", dueIn: Int64(index % 3)))
        }
        a.clock.advance(seconds: 3)
        let claimed = try await withThrowingTaskGroup(of: Int.self) { group in
            for server in [a, b, a, b] {
                group.addTask {
                    var total = 0
                    while case let count = try await ScheduledSends.sender(server).sendDue(limit: 4), count > 0 {
                        total += count
                    }
                    return total
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(claimed == 30)
        #expect(try await b.store.messageCount(projectID: a.project.id) == 30)
        let sends = try await b.store.scheduledSends(projectID: a.project.id, limit: 100)
        #expect(sends.count == 30 && sends.allSatisfy { $0.state == .sent && $0.attempts == 1 })
    }

    @Test
    func aNodeOnPostgresTakingOverAStoppedNodesSendDoesNotSendItAgain() async throws {
        let (a, b) = try await Self.twoPostgresNodes()
        try await ScheduledSends.takeOver(a, b)
    }
}
