import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import HeraldHTTP

/// An HTTP connection is closed when its next request's head, or a request's body, does not
/// arrive in time (slowloris), and never while its answer is being made.
@Suite struct RequestDeadlineTests {
    /// A connected channel whose head is due within 2 s and body within 1 s.
    func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: RequestDeadline(headTimeout: .seconds(2), bodyTimeout: .seconds(1)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        return channel
    }

    func head() -> HTTPRequestPart {
        .head(HTTPRequest(method: .post, scheme: nil, authority: "h", path: "/", headerFields: [:]))
    }

    func request(_ channel: EmbeddedChannel) throws {
        try channel.writeInbound(head())
        try channel.writeInbound(HTTPRequestPart.end(nil))
        while try channel.readInbound(as: HTTPRequestPart.self) != nil {}
    }

    func answer(_ channel: EmbeddedChannel) throws {
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        while try channel.readOutbound(as: HTTPResponsePart.self) != nil {}
    }

    /// Expects the connection open until `milliseconds` from now, and closed then.
    func expectClosed(_ channel: EmbeddedChannel, after milliseconds: Int64) {
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(milliseconds - 1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test func aConnectionWithNoRequestIsClosedAtItsHeadDeadline() throws {
        expectClosed(try connection(), after: 2_000)
    }

    @Test func aBodyThatDoesNotArriveInTimeClosesTheConnectionBeforeTheLaterHeadDeadline() throws {
        let channel = try connection()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        try channel.writeInbound(head())
        expectClosed(channel, after: 1_000)
    }

    @Test func anAnswerTakesAsLongAsItTakesAndTheNextHeadIsDueFromItsEnd() throws {
        let channel = try connection()
        try request(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(100))
        #expect(channel.isActive)
        try answer(channel)
        expectClosed(channel, after: 2_000)
    }

    @Test func requestsThatKeepComingInTimeKeepTheConnectionOpen() throws {
        let channel = try connection()
        // Each head within 2 s of the last answer, past many of the first deadlines.
        for _ in 0..<20 {
            channel.embeddedEventLoop.advanceTime(by: .milliseconds(1_500))
            try request(channel)
            channel.embeddedEventLoop.advanceTime(by: .milliseconds(400))
            try answer(channel)
            #expect(channel.isActive)
        }
        expectClosed(channel, after: 2_000)
    }
}
