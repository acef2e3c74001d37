import HeraldCore
import HeraldXMPP
import Testing

/// The XMPP stream of one app server as a state machine (reference §6): SASL PLAIN with the
/// server key, binding, downstream messages with their acks and nacks, the 100-message
/// window, and draining.
@Suite struct XMPPSessionTests {
    static let token = "APA91bt"

    private func stanza(_ text: String) throws -> XMPPStreamParser.Event {
        var parser = XMPPStreamParser()
        let events = try parser.parse(Array(("<stream:stream>" + text).utf8))
        return try #require(events.last)
    }

    private func auth(_ user: String, _ key: String) -> String {
        let plain = Base64URL.encodeStandard(Array("\0\(user)\0\(key)".utf8))
        return "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>\(plain)</auth>"
    }

    private func writes(_ actions: [XMPPSession.Action]) -> String {
        actions.compactMap { if case .write(let text) = $0 { text } else { nil } }.joined()
    }

    private func message(_ json: String) throws -> XMPPStreamParser.Event {
        try stanza("<message id=''><gcm xmlns='google:mobile:data'>\(json)</gcm></message>")
    }

    /// The JSON payloads of `<gcm>` stanzas written.
    private func payloads(_ actions: [XMPPSession.Action]) throws -> [JSONValue] {
        var parser = XMPPStreamParser()
        let events = try parser.parse(Array(("<stream:stream>" + writes(actions)).utf8))
        return try events.compactMap { event in
            guard case .stanza(let element) = event, let gcm = element.child("gcm") else { return nil }
            return try JSONParser.parse(Array(gcm.text.utf8))
        }
    }

    /// A session logged in as sender 42 and bound.
    private func established() throws -> XMPPSession {
        var session = XMPPSession(streamID: "s1")
        _ = session.received(.streamOpened(XMPPElement("stream:stream")))
        let asked = session.received(try stanza(auth("42@fcm.googleapis.com", "server-key")))
        #expect(asked == [.authenticate(senderID: 42, serverKey: "server-key")])
        let success = session.authenticated(.accepted)
        #expect(success.contains(.restartStream))
        _ = session.received(.streamOpened(XMPPElement("stream:stream")))
        _ = session.received(try stanza("<iq type='set' id='b1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></iq>"))
        #expect(session.phase == .established)
        return session
    }

    @Test func C5_theStreamOffersPlainAndAuthenticatesTheSenderIDAndServerKey() throws {
        var session = XMPPSession(streamID: "s1")
        let features = writes(session.received(.streamOpened(XMPPElement("stream:stream"))))
        #expect(features.contains("<mechanism>PLAIN</mechanism>"))
        #expect(features.contains(#"from="fcm.googleapis.com" id="s1""#))
        // The older domain is accepted too.
        #expect(
            session.received(try stanza(auth("42@gcm.googleapis.com", "k")))
                == [.authenticate(senderID: 42, serverKey: "k")])
        let success = session.authenticated(.accepted)
        #expect(writes(success).contains("<success"))
        let bindOffer = writes(session.received(.streamOpened(XMPPElement("stream:stream"))))
        #expect(bindOffer.contains("urn:ietf:params:xml:ns:xmpp-bind"))
        let bound = writes(
            session.received(
                try stanza(
                    "<iq type='set' id='b1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>r1</resource></bind></iq>"
                )))
        #expect(bound.contains("<jid>42@fcm.googleapis.com/r1</jid>"))
        #expect(session.phase == .established)
    }

    @Test func aConnectionThatDoesNotBindInTimeIsClosedAndOneThatDidIsLeftAlone() throws {
        var session = XMPPSession(streamID: "s1")
        _ = session.received(.streamOpened(XMPPElement("stream:stream")))
        let closed = session.timedOut()
        #expect(writes(closed).contains("connection-timeout"))
        #expect(closed.last == .close)
        var bound = try established()
        #expect(bound.timedOut() == [])
    }

    @Test func aRefusedLoginMayBeTriedAgainThenTheConnectionCloses() throws {
        var session = XMPPSession(streamID: "s1")
        _ = session.received(.streamOpened(XMPPElement("stream:stream")))
        for attempt in 1...3 {
            _ = session.received(try stanza(auth("42@fcm.googleapis.com", "wrong")))
            let refused = session.authenticated(.refused)
            #expect(writes(refused).contains("<not-authorized/>"))
            #expect(refused.contains(.close) == (attempt == 3))
        }
        #expect(session.phase == .closed)
    }

    @Test func T5_overTheConnectionLimitTheLoginFailsAndTheConnectionCloses() throws {
        var session = XMPPSession(streamID: "s1")
        _ = session.received(.streamOpened(XMPPElement("stream:stream")))
        _ = session.received(try stanza(auth("42@fcm.googleapis.com", "k")))
        let refused = session.authenticated(.overLimit)
        #expect(writes(refused).contains("<temporary-auth-failure/>"))
        #expect(refused.last == .close)
    }

    @Test func badLoginsAreRefusedBeforeAnyCheck() throws {
        for bad in [
            "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='X-OAUTH2'>abc</auth>",
            "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>!!!</auth>",
            auth("someone@example.com", "k"), auth("not-a-number@fcm.googleapis.com", "k"),
        ] {
            var session = XMPPSession(streamID: "s1")
            _ = session.received(.streamOpened(XMPPElement("stream:stream")))
            let answer = session.received(try stanza(bad))
            #expect(!answer.contains { if case .authenticate = $0 { true } else { false } })
            #expect(writes(answer).contains("<failure"))
        }
        // A message before logging in ends the stream.
        var session = XMPPSession(streamID: "s1")
        _ = session.received(.streamOpened(XMPPElement("stream:stream")))
        #expect(session.received(try message(#"{"to":"a","message_id":"1"}"#)).last == .close)
    }

    @Test func aDownstreamMessageIsSentAndAckedOrNackedWithFCMsCodes() throws {
        var session = try established()
        let asked = session.received(
            try message(
                #"{"to":"\#(Self.token)","message_id":"m1","data":{"k":"v"},"delivery_receipt_requested":true}"#))
        guard case .send(let downstream) = asked.first else {
            Issue.record("\(asked)")
            return
        }
        #expect(downstream.messageID == "m1")
        #expect(downstream.target == ("token", Self.token))
        #expect(downstream.receiptRequested)
        #expect(session.pendingCount == 1)
        let ack = try payloads(session.answered(downstream, error: nil))
        #expect(
            ack == [
                .object([
                    ("message_type", .string("ack")), ("from", .string(Self.token)), ("message_id", .string("m1")),
                ])
            ])
        for (error, code) in [
            (HeraldError.unregistered, "DEVICE_UNREGISTERED"), (.senderIDMismatch, "BAD_REGISTRATION"),
            (.malformedToken(field: "message.token"), "BAD_REGISTRATION"),
            (.unavailable(retryAfterSeconds: 1), "SERVICE_UNAVAILABLE"), (.internal(), "INTERNAL_SERVER_ERROR"),
            (
                .quotaExceeded(subject: "projects/p/device", retryAfterSeconds: 1, message: "m"),
                "DEVICE_MESSAGE_RATE_EXCEEDED"
            ),
            (
                .quotaExceeded(
                    subject: "fanouts", retryAfterSeconds: 1, message: "m", legacyName: "TopicsMessageRateExceeded"),
                "TOPICS_MESSAGE_RATE_EXCEEDED"
            ),
            (
                .quotaExceeded(subject: "projects/p/downstream-per-minute", retryAfterSeconds: 1, message: "m"),
                "QUOTA_EXCEEDED"
            ),
            (.invalidField("data", "reserved", legacyName: "InvalidDataKey"), "INVALID_JSON"),
        ] {
            let sent = session.received(try message(#"{"to":"\#(Self.token)","message_id":"e"}"#))
            guard case .send(let failing) = sent.first else {
                Issue.record("\(sent)")
                return
            }
            let nack = try payloads(session.answered(failing, error: error))
            #expect(nack.first?["message_type"] == .string("nack"))
            #expect(nack.first?["error"] == .string(code), "\(error)")
        }
    }

    @Test func messagesThatCannotBeSentAreNackedAtOnce() throws {
        var session = try established()
        for (json, code) in [
            (#"{"message_id":"a"}"#, "BAD_REGISTRATION"),
            (#"{"registration_ids":["x"],"message_id":"b"}"#, "INVALID_JSON"),
            (#"{"to":"x","message_id":"c","time_to_live":"soon"}"#, "INVALID_JSON"),
            (#"{"message_type":"receipt","message_id":"d"}"#, "INVALID_JSON"),
        ] {
            let answer = try payloads(session.received(try message(json)))
            #expect(answer.first?["error"] == .string(code), "\(json)")
        }
        // No message_id: a stanza error, as FCM answers it.
        let missing = writes(session.received(try message(#"{"to":"x"}"#)))
        #expect(missing.contains(#"type="error""#) && missing.contains("bad-request"))
        #expect(session.pendingCount == 0)
    }

    @Test func atMost100MessagesWaitForTheirAnswerAndAnIDIsNotReused() throws {
        var session = try established()
        for n in 0..<XMPPSession.maximumPending {
            let sent = session.received(try message(#"{"to":"x","message_id":"m\#(n)"}"#))
            guard case .send = sent.first else {
                Issue.record("\(sent)")
                return
            }
        }
        let over = try payloads(session.received(try message(#"{"to":"x","message_id":"one-more"}"#)))
        #expect(over.first?["error"] == .string("SERVICE_UNAVAILABLE"))
        #expect(session.pendingCount == XMPPSession.maximumPending)
        var fresh = try established()
        _ = fresh.received(try message(#"{"to":"x","message_id":"same"}"#))
        let again = try payloads(fresh.received(try message(#"{"to":"x","message_id":"same"}"#)))
        #expect(again.first?["error"] == .string("INVALID_JSON"))
    }

    @Test func drainingTellsTheAppServerRefusesNewMessagesAndClosesOnceAnswered() throws {
        var session = try established()
        let sent = session.received(try message(#"{"to":"x","message_id":"m1"}"#))
        guard case .send(let waiting) = sent.first else {
            Issue.record("\(sent)")
            return
        }
        let drained = session.drain()
        #expect(
            try payloads(drained) == [
                .object([("message_type", .string("control")), ("control_type", .string("CONNECTION_DRAINING"))])
            ])
        #expect(!drained.contains(.close))
        let refused = try payloads(session.received(try message(#"{"to":"x","message_id":"m2"}"#)))
        #expect(refused.first?["error"] == .string("CONNECTION_DRAINING"))
        let last = session.answered(waiting, error: nil)
        #expect(try payloads(last).first?["message_type"] == .string("ack"))
        #expect(last.last == .close)
        #expect(session.phase == .closed)
    }

    @Test func otherStanzasAreAnsweredAsXMPPDoes() throws {
        var session = try established()
        #expect(session.received(.whitespace) == [])
        #expect(session.received(try stanza("<presence/>")) == [])
        #expect(
            writes(session.received(try stanza("<iq type='get' id='p'><ping xmlns='urn:xmpp:ping'/></iq>")))
                == #"<iq type="result" id="p"/>"#)
        #expect(
            writes(session.received(try stanza("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>")))
                .contains("feature-not-implemented"))
        let closing = session.received(.streamClosed)
        #expect(closing == [.write("</stream:stream>"), .close])
    }

    private func upstream(_ id: String) -> UpstreamMessage {
        UpstreamMessage(
            projectID: "p", kind: .message, messageID: id, token: Self.token, category: "com.example",
            androidID: 7, data: [(key: "k", value: "v")], createdAt: Timestamp(seconds: 1),
            expiresAt: Timestamp(seconds: 86_401))
    }

    /// Upstream messages and receipts: at most 100 wait for the app server's ack; an ack (on
    /// any connection) deletes one; a nack leaves it for its lease to end.
    @Test func upstreamMessagesAreSentWithinTheWindowAndAcknowledgedByTheAppServer() throws {
        var session = try established()
        #expect(session.upstreamRoom == 100)
        let sent = session.offer((1...100).map { upstream("u\($0)") })
        let first = try #require(try payloads(sent).first)
        #expect(first["category"]?.stringValue == "com.example" && first["from"]?.stringValue == Self.token)
        #expect(first["message_id"]?.stringValue == "u1" && first["data"]?["k"]?.stringValue == "v")
        #expect(try payloads(sent).count == 100)
        #expect(session.upstreamRoom == 0)
        let acked = session.received(try message(#"{"to":"\#(Self.token)","message_id":"u1","message_type":"ack"}"#))
        #expect(acked == [.acknowledgeUpstream(messageID: "u1", token: Self.token)])
        #expect(session.received(try message(#"{"message_id":"u2","message_type":"nack"}"#)).isEmpty)
        #expect(session.upstreamRoom == 2)
        // An ack of what another connection was sent deletes it too.
        #expect(
            session.received(try message(#"{"message_id":"dr2:x","message_type":"ack"}"#))
                == [.acknowledgeUpstream(messageID: "dr2:x", token: nil)])
        let receipt = UpstreamMessage.receipt(
            projectID: "p", originalMessageID: "m-9", token: Self.token, category: "com.example", androidID: 7,
            at: Timestamp(milliseconds: 1_700_000_000_123))
        let written = try #require(try payloads(session.offer([receipt])).first)
        #expect(written["message_type"]?.stringValue == "receipt" && written["message_id"]?.stringValue == "dr2:m-9")
        #expect(written["from"]?.stringValue == "gcm.googleapis.com")
        #expect(written["data"]?["message_status"]?.stringValue == "MESSAGE_SENT_TO_DEVICE")
        #expect(written["data"]?["original_message_id"]?.stringValue == "m-9")
        #expect(written["data"]?["device_registration_id"]?.stringValue == Self.token)
        #expect(written["data"]?["message_sent_timestamp"]?.stringValue == "1700000000123")
        // A draining connection takes none.
        _ = session.drain()
        #expect(session.upstreamRoom == 0)
        #expect(session.offer([upstream("late")]).isEmpty)
    }
}
