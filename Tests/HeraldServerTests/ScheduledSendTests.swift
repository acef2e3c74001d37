import HeraldCore
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Testing

/// Scheduled sends go out once their time has come, exactly once: they are kept in the
/// store across a restart, one node claims each, and a node that takes over a send whose
/// claimant stopped sends it only if that node did not.
@Suite struct ScheduledSendTests {
    @Test func aScheduledSendIsKeptAcrossARestartAndGoesOutOnceAtItsTime() async throws {
        let directory = createdTemporaryDirectory()
        let first = try await TestServer.make(store: try SQLiteStore(dataDirectory: directory))
        let send = ScheduledSends.scheduled(first, "s1", dueIn: 60)
        try await first.store.addScheduledSend(send)
        first.clock.advance(seconds: 59)
        #expect(try await ScheduledSends.sender(first).sendDue() == 0)
        #expect(try await first.store.messageCount(projectID: first.project.id) == 0)

        // The node stops; a new one opens the same data directory after the send's time.
        let store = try SQLiteStore(dataDirectory: directory)
        let clock = first.clock
        clock.advance(seconds: 2)
        let node = try await TestServer.node(store: store, clock: clock)
        let second = TestServer(
            store: store, clock: clock, node: node, project: first.project, key: first.key,
            privateKey: first.privateKey)
        #expect(try await ScheduledSends.sender(second).sendDue() == 1)
        #expect(try await ScheduledSends.sender(second).sendDue() == 0)
        #expect(try await store.messageCount(projectID: first.project.id) == 1)
        let message = try #require(try await store.message(id: send.messageID))
        #expect(message.targetKind == .topic && message.target == "news")
        let kept = try await store.scheduledSends(projectID: first.project.id, limit: 10)
        #expect(kept.map(\.state) == [.sent])
        #expect(kept.first?.outcome == "projects/\(first.project.id)/messages/\(send.messageID)")
    }

    @Test func aSendRefusedAtItsTimeFailsWithTheReasonAndACancelledOneIsNotSent() async throws {
        let server = try await TestServer.make()
        var bad = ScheduledSends.scheduled(server, "bad", dueIn: 5)
        bad.body = #"{"message":{"topic":"not a topic!"}}"#
        try await server.store.addScheduledSend(bad)
        try await server.store.addScheduledSend(ScheduledSends.scheduled(server, "kept", dueIn: 5))
        #expect(try await server.store.cancelScheduledSend(projectID: server.project.id, id: "kept"))
        server.clock.advance(seconds: 5)
        #expect(try await ScheduledSends.sender(server).sendDue() == 1)
        let sends = try await server.store.scheduledSends(projectID: server.project.id, limit: 10)
        #expect(Set(sends.map(\.state)) == [.failed, .cancelled])
        #expect(sends.first { $0.id == "bad" }?.outcome.hasPrefix("Invalid topic name") == true)
        #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
    }

    @Test func aNodeTakingOverAStoppedNodesSendDoesNotSendItAgain() async throws {
        let server = try await TestServer.make()
        try await ScheduledSends.takeOver(server, try await TestServer.make(sharing: server))
    }
}
