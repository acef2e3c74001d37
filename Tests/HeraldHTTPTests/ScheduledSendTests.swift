import HeraldConsole
import HeraldCore
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Testing

/// Scheduled sends go out once their time has come, exactly once: they are kept in the
/// store across a restart, one node claims each, and a node that takes over a send whose
/// claimant stopped sends it only if that node did not.
@Suite struct ScheduledSendTests {
    static func scheduled(_ server: TestServer, _ id: String, dueIn seconds: Int64, topic: String = "news")
        -> ScheduledSend
    {
        let due = server.clock.now().adding(seconds: seconds)
        return ScheduledSend(
            id: id, projectID: server.project.id, messageID: MessageID.make(at: due),
            body: #"{"message":{"topic":"\#(topic)","notification":{"title":"Later"}}}"#, summary: "topic \(topic)",
            dueAt: due, createdBy: "ada", createdAt: server.clock.now())
    }

    static func sender(_ server: TestServer) -> ScheduledSender {
        let environment = server.node.environment
        return ScheduledSender(
            store: environment.store, sender: environment.consoleSender, directory: environment.directory,
            clock: environment.clock, logger: environment.logger)
    }

    @Test func aScheduledSendIsKeptAcrossARestartAndGoesOutOnceAtItsTime() async throws {
        let directory = createdTemporaryDirectory()
        let first = try await TestServer.make(store: try SQLiteStore(dataDirectory: directory))
        let send = Self.scheduled(first, "s1", dueIn: 60)
        try await first.store.addScheduledSend(send)
        first.clock.advance(seconds: 59)
        #expect(try await Self.sender(first).sendDue() == 0)
        #expect(try await first.store.messageCount(projectID: first.project.id) == 0)

        // The node stops; a new one opens the same data directory after the send's time.
        let store = try SQLiteStore(dataDirectory: directory)
        let clock = first.clock
        clock.advance(seconds: 2)
        let node = try await TestServer.node(store: store, clock: clock)
        let second = TestServer(
            store: store, clock: clock, node: node, project: first.project, key: first.key,
            privateKey: first.privateKey)
        #expect(try await Self.sender(second).sendDue() == 1)
        #expect(try await Self.sender(second).sendDue() == 0)
        #expect(try await store.messageCount(projectID: first.project.id) == 1)
        let message = try #require(try await store.message(id: send.messageID))
        #expect(message.targetKind == .topic && message.target == "news")
        let kept = try await store.scheduledSends(projectID: first.project.id, limit: 10)
        #expect(kept.map(\.state) == [.sent])
        #expect(kept.first?.outcome == "projects/\(first.project.id)/messages/\(send.messageID)")
    }

    @Test func aSendRefusedAtItsTimeFailsWithTheReasonAndACancelledOneIsNotSent() async throws {
        let server = try await TestServer.make()
        var bad = Self.scheduled(server, "bad", dueIn: 5)
        bad.body = #"{"message":{"topic":"not a topic!"}}"#
        try await server.store.addScheduledSend(bad)
        try await server.store.addScheduledSend(Self.scheduled(server, "kept", dueIn: 5))
        #expect(try await server.store.cancelScheduledSend(projectID: server.project.id, id: "kept"))
        server.clock.advance(seconds: 5)
        #expect(try await Self.sender(server).sendDue() == 1)
        let sends = try await server.store.scheduledSends(projectID: server.project.id, limit: 10)
        #expect(Set(sends.map(\.state)) == [.failed, .cancelled])
        #expect(sends.first { $0.id == "bad" }?.outcome.hasPrefix("Invalid topic name") == true)
        #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
    }

    /// A node claimed the send, had its message accepted and stopped before saying so.
    static func takeOver(_ server: TestServer, _ other: TestServer) async throws {
        let send = Self.scheduled(server, "s1", dueIn: 1)
        try await server.store.addScheduledSend(send)
        server.clock.advance(seconds: 1)
        let now = server.clock.now()
        let claimed = try await server.store.claimDueSends(now: now, until: now.adding(seconds: 10), limit: 5)
        #expect(claimed.map(\.id) == ["s1"])
        let request = try SendRequest.decode(Array(send.body.utf8), limits: server.project.settings.message)
        _ = try await server.node.environment.dispatcher.send(
            request, project: server.project, messageID: send.messageID)
        // Another node finds nothing to do while the claim lasts, then takes the send over.
        #expect(try await Self.sender(other).sendDue() == 0)
        server.clock.advance(seconds: 10)
        #expect(try await Self.sender(other).sendDue() == 1)
        #expect(try await server.store.messageCount(projectID: server.project.id) == 1)
        let kept = try await server.store.scheduledSends(projectID: server.project.id, limit: 10)
        #expect(kept.map(\.state) == [.sent] && kept.first?.attempts == 2)
    }

    @Test func aNodeTakingOverAStoppedNodesSendDoesNotSendItAgain() async throws {
        let server = try await TestServer.make()
        try await Self.takeOver(server, try await TestServer.make(sharing: server))
    }

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

    @Test(.enabled(if: TestPostgres.location != nil, "needs PostgreSQL: run scripts/test"))
    func twoNodesOnPostgresSendEachScheduledSendExactlyOnce() async throws {
        let (a, b) = try await Self.twoPostgresNodes()
        for index in 0..<30 {
            try await a.store.addScheduledSend(Self.scheduled(a, "s\(index)", dueIn: Int64(index % 3)))
        }
        a.clock.advance(seconds: 3)
        let claimed = try await withThrowingTaskGroup(of: Int.self) { group in
            for server in [a, b, a, b] {
                group.addTask {
                    var total = 0
                    while case let count = try await Self.sender(server).sendDue(limit: 4), count > 0 { total += count }
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

    @Test(.enabled(if: TestPostgres.location != nil, "needs PostgreSQL: run scripts/test"))
    func aNodeOnPostgresTakingOverAStoppedNodesSendDoesNotSendItAgain() async throws {
        let (a, b) = try await Self.twoPostgresNodes()
        try await Self.takeOver(a, b)
    }
}
