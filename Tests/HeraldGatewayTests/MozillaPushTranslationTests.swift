import HeraldCore
import HeraldProtocol
import Testing

@testable import HeraldGateway

/// Mozilla's push protocol told to the MCS session, as events and actions with no sockets.
@Suite struct MozillaPushTranslationTests {
    let start = Timestamp(seconds: 1_800_000_000)
    let channel = "e945b639-94df-457e-8e51-631d29956ce9"

    func text(_ json: String) -> [UInt8] { Array(json.utf8) }

    /// A translation past `hello`, logged in as device 7 with token 9.
    func ready() -> MozillaPushTranslation {
        var translation = MozillaPushTranslation()
        _ = translation.received(text(#"{"messageType":"hello"}"#), now: start)
        _ = translation.identified(androidID: 7, securityToken: 9)
        var response = McsProto_LoginResponse()
        response.id = "mozilla-push"
        _ = translation.fromSession(try! MCSFrame(.loginResponse, response))
        return translation
    }

    @Test func helloBecomesTheDevicesLogin() throws {
        var translation = MozillaPushTranslation()
        #expect(
            translation.received(text(#"{"messageType":"hello","uaid":"abc"}"#), now: start) == [.identify(uaid: "abc")]
        )
        let actions = translation.identified(androidID: 7, securityToken: 9)
        guard case .toSession(let login) = actions.first else { Issue.record("no login"); return }
        let request = try login.decode(as: McsProto_LoginRequest.self)
        #expect(request.user == "7" && request.authToken == "9")
        #expect(request.heartbeatStat.intervalMs == 300_000)
        var response = McsProto_LoginResponse()
        response.id = "mozilla-push"
        let uaid = MozillaPushUAID.make(androidID: 7, securityToken: 9)
        #expect(
            translation.fromSession(try MCSFrame(.loginResponse, response))
                == [.toClient(MozillaPushReply.hello(uaid: uaid))])
        #expect(translation.uaid == uaid)
    }

    @Test func aRefusedLoginCloses() throws {
        var translation = MozillaPushTranslation()
        _ = translation.received(text(#"{"messageType":"hello"}"#), now: start)
        _ = translation.identified(androidID: 7, securityToken: 9)
        var response = McsProto_LoginResponse()
        response.id = "mozilla-push"
        var error = McsProto_ErrorInfo()
        error.code = 401
        response.error = error
        guard case .close = translation.fromSession(try MCSFrame(.loginResponse, response)).first else {
            Issue.record("not closed")
            return
        }
    }

    @Test func anythingBeforeHelloOrASecondHelloCloses() {
        var translation = MozillaPushTranslation()
        #expect(
            translation.received(text(#"{"messageType":"register","channelID":"\#(channel)"}"#), now: start)
                == [.close(code: MozillaPushTranslation.protocolError, reason: "expected messageType=\"hello\"")])
        var second = ready()
        #expect(
            second.received(text(#"{"messageType":"hello"}"#), now: start)
                == [.close(code: MozillaPushTranslation.protocolError, reason: "a second hello")])
        var malformed = ready()
        guard case .close(let code, _) = malformed.received(text("{"), now: start).first else {
            Issue.record("not closed")
            return
        }
        #expect(code == MozillaPushTranslation.protocolError)
        // Once closed, nothing more happens.
        #expect(malformed.received(text("{}"), now: start).isEmpty)
    }

    @Test func notificationsCarryTheBodyAndTheChannel() throws {
        var translation = ready()
        let request = WebPushRequest(ttlSeconds: 60, urgency: .normal, body: [9, 8, 7])
        var withEncoding = request
        withEncoding.contentEncoding = "aes128gcm"
        let stanza = MCSFrame.webPushStanza(
            withEncoding, category: MozillaPushService.appID, from: "", subtype: channel)
        let frame = MCSFrame.dataMessage(stored: stanza, persistentID: "p1", lastStreamIDReceived: 1)
        #expect(
            translation.fromSession(frame) == [
                .toClient(
                    MozillaPushReply.notification(
                        channelID: channel, version: "p1", body: [9, 8, 7], encoding: "aes128gcm", cryptoKey: nil,
                        encryption: nil))
            ])
        // The client's ack is the session's selective acknowledgement.
        #expect(
            translation.received(
                text(#"{"messageType":"ack","updates":[{"channelID":"\#(channel)","version":"p1"}]}"#), now: start)
                == [.toSession(.selectiveAck(["p1"]))])
        // A message the protocol cannot carry is taken as read at once.
        let signal = MCSFrame.dataMessage(
            stored: MCSFrame.webPushStanza(request, category: "app", from: "", subtype: nil), persistentID: "p2",
            lastStreamIDReceived: 1)
        #expect(translation.fromSession(signal) == [.toSession(.selectiveAck(["p2"]))])
    }

    @Test func pingsAreHeartbeatsAtMostEvery45Seconds() {
        var translation = ready()
        #expect(
            translation.received(text("{}"), now: start) == [.toSession(MCSFrame(tag: .heartbeatPing, payload: []))])
        #expect(translation.fromSession(MCSFrame(tag: .heartbeatAck, payload: [])) == [.toClient("{}")])
        #expect(translation.fromSession(MCSFrame(tag: .heartbeatPing, payload: [])) == [.pingClient])
        #expect(translation.receivedPong() == [.toSession(MCSFrame(tag: .heartbeatAck, payload: []))])
        #expect(
            translation.received(text("{}"), now: start.adding(seconds: 10))
                == [.close(code: MozillaPushTranslation.policyViolation, reason: "pings too often")])
    }

    @Test func aRegisterFloodCloses() {
        var translation = ready()
        for _ in 0..<MozillaPushTranslation.registrationsPerMinute {
            #expect(
                translation.received(text(#"{"messageType":"register","channelID":"\#(channel)"}"#), now: start)
                    == [.register(channelID: channel, key: nil, androidID: 7)])
        }
        #expect(
            translation.received(text(#"{"messageType":"unregister","channelID":"\#(channel)"}"#), now: start)
                == [.close(code: MozillaPushTranslation.policyViolation, reason: "too many registrations")])
    }

    @Test func theServerStoppingTellsTheClientToGoAway() {
        var translation = ready()
        #expect(
            translation.fromSession(MCSFrame(tag: .close, payload: []))
                == [.close(code: MozillaPushTranslation.goingAway, reason: "the server is stopping")])
    }
}
