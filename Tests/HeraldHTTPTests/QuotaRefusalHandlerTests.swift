import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import HeraldHTTP

/// SEMANTICS T1: sends of a project past its quota answered on the event loop, with the
/// route's own answer, and everything the handler cannot decide at once left to the router.
@Suite struct QuotaRefusalHandlerTests {
    /// A server whose project may send one message a minute, and an access token for it.
    func withQuotaOfOne(_ body: @Sendable (TestServer, Project, String) async throws -> Void) async throws {
        let server = try await TestServer.make(downstreamPerMinute: 1)
        try await server.test { client in
            let token = try await server.accessToken(client)
            let project = try #require(server.node.directory.project(named: server.project.id))
            try await body(server, project, token)
        }
    }

    func head(_ server: TestServer, token: String, path: String? = nil) -> HTTPRequestPart {
        var fields: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
        fields[.contentLength] = "2"
        return .head(
            HTTPRequest(
                method: .post, scheme: nil, authority: "127.0.0.1",
                path: path ?? "/v1/projects/\(server.project.id)/messages:send", headerFields: fields))
    }

    /// Feeds a whole request; answers what reached the router and what was answered.
    func request(_ channel: EmbeddedChannel, _ head: HTTPRequestPart) throws -> (
        passed: [HTTPRequestPart], answered: [HTTPResponsePart]
    ) {
        try channel.writeInbound(head)
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{}")))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        var passed: [HTTPRequestPart] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) { passed.append(part) }
        var answered: [HTTPResponsePart] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) { answered.append(part) }
        return (passed, answered)
    }

    /// What the router does at the end of an answer.
    func answerFromTheRouter(_ channel: EmbeddedChannel) throws {
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        _ = try channel.readOutbound(as: HTTPResponsePart.self)
    }

    @Test func T1_aProjectRefusedLatelyIsAnsweredWithTheRoutesOwn429() async throws {
        try await withQuotaOfOne { server, project, token in
            let environment = server.node.environment
            let channel = EmbeddedChannel(handler: QuotaRefusalHandler(environment: environment))
            // Under its quota, and never refused: every send goes to the router.
            #expect(try request(channel, head(server, token: token)).passed.count == 3)
            try answerFromTheRouter(channel)
            try environment.quotas.admitDownstream(project, now: server.clock.now())
            #expect(try request(channel, head(server, token: token)).passed.count == 3)
            try answerFromTheRouter(channel)
            // The router's refusal (counting nothing) marks the project.
            server.clock.advance(seconds: 10)
            let routeError = #expect(throws: HeraldError.self) {
                try environment.quotas.admitDownstream(project, now: server.clock.now())
            }
            let refused = try request(channel, head(server, token: token))
            #expect(refused.passed.isEmpty)
            guard refused.answered.count == 3, case .head(let response) = refused.answered[0],
                case .body(let body) = refused.answered[1], case .end = refused.answered[2]
            else {
                Issue.record("not one whole answer: \(refused.answered)")
                return
            }
            #expect(response.status.code == 429)
            #expect(response.headerFields[.retryAfter] == routeError?.retryAfterSeconds.map(String.init))
            #expect(response.headerFields[.contentType] == "application/json; charset=UTF-8")
            #expect(response.headerFields[.contentLength] == String(body.readableBytes))
            #expect(String(buffer: body) == routeError?.v1Body.rendered)
            let metrics = environment.renderMetrics()
            #expect(metrics.contains(#"herald_errors_total{code="QUOTA_EXCEEDED"}"#))
            #expect(metrics.contains(#"route="/v1/projects/{project}/messages:send",status="429"}"#))
            // Ten seconds on, the connection's next refusal names the shorter wait (the
            // rendered answer is not reused for another error).
            server.clock.advance(seconds: 10)
            let later = try request(channel, head(server, token: token))
            let laterError = environment.quotas.downstreamRefusal(project, now: server.clock.now())
            guard case .head(let laterResponse) = later.answered.first else {
                Issue.record("no answer: \(later)")
                return
            }
            #expect(laterResponse.headerFields[.retryAfter] == laterError?.retryAfterSeconds.map(String.init))
            #expect(laterResponse.headerFields[.retryAfter] != response.headerFields[.retryAfter])
            // Once the first message has left the window, sends go to the router again.
            server.clock.advance(seconds: 41)
            #expect(try request(channel, head(server, token: token)).passed.count == 3)
        }
    }

    /// The project of `withQuotaOfOne` sent its one message and was refused just before
    /// the message left its window.
    func refusedJustBeforeRoomComesBack(_ server: TestServer, _ project: Project) throws {
        let quotas = server.node.environment.quotas
        try quotas.admitDownstream(project, now: server.clock.now())
        server.clock.advance(milliseconds: 59_500)
        #expect(throws: HeraldError.self) { try quotas.admitDownstream(project, now: server.clock.now()) }
        // Room for one is back within two 10 ms buckets of a minute; the project stays
        // marked for a second after its refusal.
        server.clock.advance(milliseconds: 600)
        #expect(quotas.downstreamRefusal(project, now: server.clock.now()) == nil)
        #expect(quotas.isRefusingDownstream(projectID: project.id, now: server.clock.now()))
    }

    func isAnswered429(_ outcome: (passed: [HTTPRequestPart], answered: [HTTPResponsePart])) -> Bool {
        guard outcome.passed.isEmpty, outcome.answered.count == 3, case .head(let response) = outcome.answered[0]
        else { return false }
        return response.status.code == 429
    }

    @Test func T1_sendsArrivingTogetherFindTheRoomForOneOnce() async throws {
        try await withQuotaOfOne { server, project, token in
            let environment = server.node.environment
            try refusedJustBeforeRoomComesBack(server, project)
            let first = EmbeddedChannel(handler: QuotaRefusalHandler(environment: environment))
            let second = EmbeddedChannel(handler: QuotaRefusalHandler(environment: environment))
            // The first send takes the room on its way to the route; the second, on another
            // connection before the first is answered, is answered at once.
            #expect(try request(first, head(server, token: token)).passed.count == 3)
            #expect(isAnswered429(try request(second, head(server, token: token))))
            // Once the first is answered (here the route gave its count back), the room is
            // found again.
            try answerFromTheRouter(first)
            #expect(try request(second, head(server, token: token)).passed.count == 3)
            // A connection that closes before its answer gives its place back too.
            #expect(isAnswered429(try request(first, head(server, token: token))))
            _ = try second.finish()
            #expect(try request(first, head(server, token: token)).passed.count == 3)
        }
    }

    @Test func T1_whatCannotBeDecidedAtOnceGoesToTheRouter() async throws {
        try await withQuotaOfOne { server, project, token in
            let environment = server.node.environment
            let now = server.clock.now()
            try environment.quotas.admitDownstream(project, now: now)
            #expect(throws: HeraldError.self) { try environment.quotas.admitDownstream(project, now: now) }
            let channel = EmbeddedChannel(handler: QuotaRefusalHandler(environment: environment))
            // Another path of the project.
            let other = "/v1/projects/\(server.project.id)/registrations:send"
            #expect(try request(channel, head(server, token: token, path: other)).passed.count == 3)
            try answerFromTheRouter(channel)
            // Credentials that do not verify: the router answers 401. While it has not, the
            // next send goes to the router too, so that the answers keep their order.
            #expect(try request(channel, head(server, token: token + "x")).passed.count == 3)
            #expect(try request(channel, head(server, token: token)).passed.count == 3)
            try answerFromTheRouter(channel)
            try answerFromTheRouter(channel)
            // A client that closes after the answer, or waits to be told to send its body.
            for (name, value) in [(HTTPField.Name.connection, "close"), (.expect, "100-continue")] {
                guard case .head(var modified) = head(server, token: token) else { return }
                modified.headerFields[name] = value
                #expect(try request(channel, .head(modified)).passed.count == 3, "\(name)")
                try answerFromTheRouter(channel)
            }
            // With nothing in progress, the same send is answered at once.
            #expect(try request(channel, head(server, token: token)).answered.count == 3)
        }
    }

    @Test func theSendPathNamesItsProject() {
        #expect(QuotaRefusalHandler.sendProject("/v1/projects/p-1/messages:send") == "p-1")
        #expect(QuotaRefusalHandler.sendProject("/v1/projects/p-1/messages:send?x=1") == "p-1")
        #expect(QuotaRefusalHandler.sendProject("/v1/projects//messages:send") == nil)
        #expect(QuotaRefusalHandler.sendProject("/v1/projects/a/b/messages:send") == nil)
        #expect(QuotaRefusalHandler.sendProject("/v1/projects/p-1/messages:sendx") == nil)
        #expect(QuotaRefusalHandler.sendProject(nil) == nil)
    }

    @Test func theDateHeaderIsAnIMFFixdate() {
        #expect(QuotaRefusalHandler.httpDate(secondsSinceEpoch: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(QuotaRefusalHandler.httpDate(secondsSinceEpoch: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(QuotaRefusalHandler.httpDate(secondsSinceEpoch: 951_825_600) == "Tue, 29 Feb 2000 12:00:00 GMT")
        #expect(QuotaRefusalHandler.httpDate(secondsSinceEpoch: 1_795_392_000) == "Mon, 23 Nov 2026 00:00:00 GMT")
    }
}
