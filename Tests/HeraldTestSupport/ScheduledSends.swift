public import HeraldCore
public import HeraldServer
public import HeraldStorage
import Testing

/// Sends scheduled for a test server, the sender that sends them, and what every store
/// must do when a node takes over a stopped node's send.
public enum ScheduledSends {
    /// A send of a message to `topic`, due in `seconds` on the server's clock.
    public static func scheduled(_ server: TestServer, _ id: String, dueIn seconds: Int64, topic: String = "news")
        -> ScheduledSend
    {
        let due = server.clock.now().adding(seconds: seconds)
        return ScheduledSend(
            id: id, projectID: server.project.id, messageID: MessageID.make(at: due),
            body: #"{"message":{"topic":"\#(topic)","notification":{"title":"Later"}}}"#, summary: "topic \(topic)",
            dueAt: due, createdBy: "ada", createdAt: server.clock.now())
    }

    /// The scheduled sender of the server's node.
    public static func sender(_ server: TestServer) -> ScheduledSender {
        let environment = server.node.environment
        return ScheduledSender(
            store: environment.store, work: environment.store.work, sender: environment.consoleSender,
            directory: environment.directory,
            clock: environment.clock, logger: environment.logger)
    }

    /// A node claimed the send, had its message accepted and stopped before saying so.
    public static func takeOver(_ server: TestServer, _ other: TestServer) async throws {
        let send = scheduled(server, "s1", dueIn: 1)
        try await server.store.addScheduledSend(send)
        server.clock.advance(seconds: 1)
        let now = server.clock.now()
        let claimed = try await server.store.claimDueSends(now: now, until: now.adding(seconds: 10), limit: 5)
        #expect(claimed.map(\.id) == ["s1"])
        let request = try SendRequest.decode(Array(send.body.utf8), limits: server.project.settings.message)
        _ = try await server.node.environment.dispatcher.send(
            request, project: server.project, messageID: send.messageID)
        // Another node finds nothing to do while the claim lasts, then takes the send over.
        #expect(try await sender(other).sendDue() == 0)
        server.clock.advance(seconds: 10)
        #expect(try await sender(other).sendDue() == 1)
        #expect(try await server.store.messageCount(projectID: server.project.id) == 1)
        let kept = try await server.store.scheduledSends(projectID: server.project.id, limit: 10)
        #expect(kept.map(\.state) == [.sent] && kept.first?.attempts == 2)
    }
}
