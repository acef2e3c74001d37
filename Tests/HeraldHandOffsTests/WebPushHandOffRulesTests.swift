import HeraldCore
import HeraldProtocol
import HeraldStorage
import Testing

@testable import HeraldHandOffs

/// The hand-off to browsers' push services' pure rules (SEMANTICS W1–W3): the endpoints taken,
/// the request a queue entry becomes, the services' verdicts, and the VAPID header.
@Suite struct WebPushHandOffRulesTests {
    static func entry(stanza: [UInt8], collapseKey: String? = nil, isHighPriority: Bool = false) -> QueuedMessage {
        QueuedMessage(
            androidID: 5, token: "w:APA91bTOKEN", persistentID: "p1", messageID: "m1", projectID: "p",
            stanza: stanza, createdAt: Timestamp(milliseconds: 0), expiresAt: Timestamp(milliseconds: 100_000),
            collapseKey: collapseKey, isHighPriority: isHighPriority)
    }

    static func stanza(coding: String = "aes128gcm", ttl: Int32 = 100, _ chosen: [(String, String)] = []) throws
        -> [UInt8]
    {
        var stanza = McsProto_DataMessageStanza()
        (stanza.from, stanza.category) = ("123", "")
        stanza.rawData = .init([1, 2, 3])
        stanza.ttl = ttl
        stanza.appData = ([("content-encoding", coding)] + chosen).map { key, value in
            var item = McsProto_AppData()
            (item.key, item.value) = (key, value)
            return item
        }
        return try stanza.serializedBytes()
    }

    static let endpoint = "https://updates.push.services.mozilla.com/wpush/v2/gAAAA"

    @Test func W1_theKnownServicesAndTheOperatorsAreTakenOverHTTPSOnly() {
        let services = WebPushServices(adding: ["push.example.org", "*.corp.example"])
        #expect(services.host(of: "https://fcm.googleapis.com/fcm/send/abc") == "fcm.googleapis.com")
        #expect(services.host(of: Self.endpoint) == "updates.push.services.mozilla.com")
        #expect(services.host(of: "https://web.push.apple.com/QO3b") == "web.push.apple.com")
        #expect(services.host(of: "https://wns2-par02p.notify.windows.com/w/?token=x") != nil)
        #expect(services.host(of: "https://push.example.org:8443/p/1") == "push.example.org")
        #expect(services.host(of: "https://a.corp.example/p/1") == "a.corp.example")
        #expect(services.host(of: "http://fcm.googleapis.com/fcm/send/abc") == nil)
        #expect(services.host(of: "https://notify.windows.com.evil.example/x") == nil)
        #expect(services.host(of: "https://evil.example/fcm.googleapis.com") == nil)
        #expect(services.host(of: "https://user@fcm.googleapis.com/x") == nil)
        #expect(services.host(of: "https://fcm.googleapis.com") == nil)
        #expect(WebPushServices().host(of: "https://push.example.org/p/1") == nil)
    }

    @Test func W2_anEntryGoesWithTheTimeToLiveLeftItsUrgencyAndTopic() throws {
        let request = try WebPushHandOffRequest(
            Self.entry(stanza: try Self.stanza(), collapseKey: "scores", isHighPriority: true),
            endpoint: Self.endpoint, now: Timestamp(milliseconds: 40_000))
        #expect(request.path == "/wpush/v2/gAAAA" && request.body == [1, 2, 3])
        #expect(request.headers.map { "\($0.0)=\($0.1)" } == ["ttl=60", "urgency=high", "topic=scores"])
        // The sender's own headers win; a collapse key that is no Topic is hashed into one.
        let chosen = try WebPushHandOffRequest(
            Self.entry(
                stanza: try Self.stanza([("urgency", "very-low"), ("topic", "mine")]), collapseKey: "x"),
            endpoint: Self.endpoint, now: Timestamp(milliseconds: 0))
        #expect(chosen.headers.map { "\($0.0)=\($0.1)" } == ["ttl=100", "urgency=very-low", "topic=mine"])
        let hashed = try WebPushHandOffRequest(
            Self.entry(stanza: try Self.stanza([("urgency", "urgent")]), collapseKey: "a collapse key: not a Topic"),
            endpoint: Self.endpoint, now: Timestamp(milliseconds: 0))
        let topic = try #require(hashed.headers.first { $0.0 == "topic" }?.1)
        #expect(hashed.headers.first?.1 == "100" && hashed.headers[1].1 == "normal")
        #expect(topic.count == 32 && WebPushRequest.isTopic(topic))
        // Sent with 0, or past its time: TTL 0.
        let nowOrNever = try WebPushHandOffRequest(
            Self.entry(stanza: try Self.stanza(ttl: 0)), endpoint: Self.endpoint, now: Timestamp(milliseconds: 0))
        #expect(nowOrNever.headers.first?.1 == "0" && nowOrNever.headers.count == 2)
        #expect(throws: WebPushHandOffRequest.Unusable.self) {
            try WebPushHandOffRequest(
                Self.entry(stanza: try Self.stanza(coding: "aesgcm")), endpoint: Self.endpoint,
                now: Timestamp(milliseconds: 0))
        }
    }

    @Test func W3_theServicesVerdictsMapBack() {
        func verdict(_ status: Int, retryAfter: String? = nil) -> HandOffVerdict {
            HandOffVerdict(webPush: HTTP2Answer(status: status, retryAfter: retryAfter, body: []))
        }
        #expect(verdict(201) == .delivered && verdict(202) == .delivered)
        #expect(verdict(404) == .unregistered(reason: "HTTP 404") && verdict(410) == .unregistered(reason: "HTTP 410"))
        #expect(verdict(413) == .refused(reason: "HTTP 413") && verdict(400) == .refused(reason: "HTTP 400"))
        #expect(verdict(429, retryAfter: "12") == .retry(reason: "HTTP 429", retryAfterSeconds: 12))
        #expect(verdict(503) == .retry(reason: "HTTP 503"))
        #expect(HandOffVerdict(webPush: nil) == .retry(reason: "no answer"))
        #expect(verdict(401) == .credentialRefused(reason: "HTTP 401"))
        #expect(verdict(403) == .credentialRefused(reason: "HTTP 403"))
    }

    @Test func W2_theVAPIDHeaderIsAJWTThePushServiceVerifies() throws {
        let key = VAPID.makeKey(projectID: "p", at: Timestamp(seconds: 1_000))
        let header = try VAPID.authorization(
            privateKey: key.privateKey, publicKey: key.publicKey, audience: "https://fcm.googleapis.com",
            subject: "mailto:ops@example.com", expiresAt: 1_000 + 12 * 3600)
        let credential = try #require(try VAPID.credential(authorization: header, cryptoKey: nil))
        #expect(credential.key == key.publicKey)
        let subject = try VAPID.verify(
            credential, audiences: ["https://fcm.googleapis.com"], subscriptionKey: key.publicKey,
            now: Timestamp(seconds: 1_000))
        #expect(subject == "mailto:ops@example.com")
        #expect(throws: VAPID.Failure.wrongAudience("https://fcm.googleapis.com")) {
            try VAPID.verify(
                credential, audiences: ["https://web.push.apple.com"], subscriptionKey: nil,
                now: Timestamp(seconds: 1_000))
        }
    }
}
