import HeraldCore
import HeraldProtocol
import Testing

@testable import HeraldClient

/// The device's side of one MCS connection, with the time given by the test.
@Suite struct MCSClientSessionTests {
    let start = ContinuousClock().now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    func loggedIn(heartbeat: Duration = .seconds(60)) throws -> MCSClientSession {
        var session = MCSClientSession(heartbeat: heartbeat, openedAt: start)
        var response = McsProto_LoginResponse()
        response.id = "login"
        #expect(try session.received(try MCSFrame(.loginResponse, response), now: start) == [.loggedIn])
        return session
    }

    func heartbeatAck(upTo streamID: Int32) throws -> MCSFrame {
        var ack = McsProto_HeartbeatAck()
        ack.lastStreamIDReceived = streamID
        return try MCSFrame(.heartbeatAck, ack)
    }

    func upstream(_ id: String) -> UpstreamRequest {
        UpstreamRequest(messageID: id, to: "1@fcm.googleapis.com", category: "app", token: "t", data: ["k": "v"])
    }

    /// A data message from the server, with the fields MCS requires.
    static func stanza() -> McsProto_DataMessageStanza {
        var stanza = McsProto_DataMessageStanza()
        stanza.from = "1"
        stanza.category = "app"
        return stanza
    }

    @Test func theLoginIsAnsweredFirstOrTheConnectionFails() throws {
        var refused = MCSClientSession(heartbeat: .seconds(60), openedAt: start)
        var response = McsProto_LoginResponse()
        response.id = "login"
        response.error.code = 401
        response.error.message = "unknown device"
        #expect(throws: MCSClientSession.Failure.loginRefused(code: 401, message: "unknown device")) {
            try refused.received(try MCSFrame(.loginResponse, response), now: start)
        }
        var early = MCSClientSession(heartbeat: .seconds(60), openedAt: start)
        #expect(throws: MCSClientSession.Failure.unexpected(.heartbeatPing)) {
            try early.received(try MCSFrame(.heartbeatPing, McsProto_HeartbeatPing()), now: start)
        }
        // A login that takes too long is given up.
        var slow = MCSClientSession(heartbeat: .seconds(60), openedAt: start)
        #expect(try slow.tick(now: at(30)).isEmpty)
        #expect(try slow.tick(now: at(30.5)) == [.close])
    }

    @Test func anIdleConnectionBeatsAndASilentOneIsGivenUp() throws {
        var session = try loggedIn(heartbeat: .seconds(10))
        #expect(try session.tick(now: at(9)).isEmpty)
        #expect(try session.tick(now: at(10)) == [.write(try MCSFrame(.heartbeatPing, McsProto_HeartbeatPing()))])
        #expect(session.streamCount == 1)
        // The server's ping is answered, and counts as something heard.
        #expect(
            try session.received(try MCSFrame(.heartbeatPing, McsProto_HeartbeatPing()), now: at(15)) == [
                .write(try MCSFrame(.heartbeatAck, McsProto_HeartbeatAck()))
            ])
        #expect(session.streamCount == 2)
        // Two heartbeats and ten seconds of silence from the server end the connection.
        #expect(try session.tick(now: at(45)) != [.close])
        #expect(try session.tick(now: at(45.5)) == [.close])
    }

    @Test func anUpstreamMessageIsSentOnceTheServerCountsItsStanza() throws {
        var session = try loggedIn()
        _ = session.write(MCSFrame.selectiveAck(["p1"]), now: at(1))
        #expect(session.write(upstream: upstream("u1"), now: at(2)) == .write(MCSFrame.upstream(upstream("u1"))))
        _ = session.write(upstream: upstream("u2"), now: at(3))
        // Stanzas 1 (the ack) and 2 (u1) are acknowledged; u2 (3) is not yet.
        #expect(try session.received(try heartbeatAck(upTo: 2), now: at(4)) == [.upstreamSent(messageID: "u1")])
        #expect(try session.received(try heartbeatAck(upTo: 2), now: at(5)).isEmpty)
        // A data message carries the count too, after the message itself.
        var stanza = Self.stanza()
        stanza.persistentID = "p2"
        stanza.lastStreamIDReceived = 3
        #expect(
            try session.received(try MCSFrame(.dataMessageStanza, stanza), now: at(6)) == [
                .receive(stanza), .upstreamSent(messageID: "u2"),
            ])
    }

    @Test func aRefusedUpstreamMessageIsNeverReportedSent() throws {
        var session = try loggedIn()
        _ = session.write(upstream: upstream("u1"), now: at(1))
        var refusal = Self.stanza()
        refusal.appData = [
            .with {
                $0.key = "message_type"
                $0.value = "send_error"
            },
            .with {
                $0.key = "google.message_id"
                $0.value = "u1"
            },
        ]
        #expect(try session.received(try MCSFrame(.dataMessageStanza, refusal), now: at(2)) == [.receive(refusal)])
        #expect(try session.received(try heartbeatAck(upTo: 1), now: at(3)).isEmpty)
    }

    @Test func theServerClosingEndsTheConnection() throws {
        var session = try loggedIn()
        #expect(try session.received(MCSFrame(tag: .close, payload: []), now: at(1)) == [.close])
    }
}
