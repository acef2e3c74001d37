import HeraldCore
import Testing

@testable import HeraldHTTP

/// How `register3` forms from real clients are read: Android and Apple SDKs, Chromium's GCM
/// and Instance ID requests, and `fcm-receiver`'s topic requests.
@Suite struct Register3RequestTests {
    let device: UInt64 = 4_242
    let token = Registration.makeToken()

    @Test func aTopicRequestWithTheTokenAsSenderSubscribesThatToken() throws {
        let form = [
            "app": "org.chromium.linux", "device": "4242", "sender": token, "X-subtype": token,
            "X-gcm.topic": "/topics/news", "X-scope": "/topics/news", "X-kid": "|ID|1|",
        ]
        #expect(
            try Register3Request.parse(form, androidID: device)
                == .topic(.init(app: "org.chromium.linux", token: token, topic: "news", subscribing: true)))
        var deleting = form
        deleting["delete"] = "1"
        #expect(
            try Register3Request.parse(deleting, androidID: device)
                == .topic(.init(app: "org.chromium.linux", token: token, topic: "news", subscribing: false)))
    }

    @Test func aTopicRequestNeedsAWellFormedTokenAndATopicPath() {
        let base = ["app": "com.example", "sender": token, "X-gcm.topic": "/topics/news"]
        var malformed = base
        malformed["sender"] = "not-a-token"
        #expect(throws: Register3Request.Refusal(code: "INVALID_PARAMETERS")) {
            try Register3Request.parse(malformed, androidID: device)
        }
        for topic in ["news", "/topics/", "/topics/has space"] {
            var bad = base
            bad["X-gcm.topic"] = topic
            #expect(throws: Register3Request.Refusal(code: "INVALID_TOPIC")) {
                try Register3Request.parse(bad, androidID: device)
            }
        }
    }

    @Test func L6_aBrowsersInstanceIDDeleteNamesOneSiteAndExpectsATokenLine() throws {
        let form = [
            "delete": "true", "app": "org.chromium.linux", "X-subtype": "wp:http://localhost:1/#a1",
            "appid": "cXr5b1", "sender": "*", "scope": "*", "X-scope": "*", "device": "4242",
        ]
        guard case .unregister(let request) = try Register3Request.parse(form, androidID: device) else {
            Issue.record("not an unregistration")
            return
        }
        #expect(request.subtype == "wp:http://localhost:1/#a1")
        #expect(request.sender == nil)
        #expect(request.answer == "token=cXr5b1")
        let site = Registration(
            token: token, kind: .webChannel, projectID: nil, sender: "BKey", appID: "org.chromium.linux",
            subtype: "wp:http://localhost:1/#a1", platform: .web, androidID: device, createdAt: Timestamp(seconds: 1))
        var other = site
        other.subtype = "wp:http://localhost:2/#b2"
        #expect(request.matches(site))
        #expect(!request.matches(other))
    }

    @Test func L6_aGCMDeleteIsAnsweredWithTheDeletedAppID() throws {
        let withSubtype = try Register3Request.parse(
            ["delete": "true", "app": "org.chromium.linux", "X-subtype": "wp:x#1", "device": "4242"], androidID: device)
        let plain = try Register3Request.parse(["delete": "true", "app": "com.example.app"], androidID: device)
        guard case .unregister(let a) = withSubtype, case .unregister(let b) = plain else {
            Issue.record("not unregistrations")
            return
        }
        #expect(a.answer == "deleted=wp:x#1")
        #expect(b.answer == "deleted=com.example.app")
    }

    @Test func aRegistrationNeedsAnAppASenderAndTheRequestingDevice() throws {
        #expect(throws: Register3Request.Refusal(code: "INVALID_PARAMETERS")) {
            try Register3Request.parse(["sender": "123"], androidID: device)
        }
        #expect(throws: Register3Request.Refusal(code: "INVALID_PARAMETERS")) {
            try Register3Request.parse(["app": "com.example", "sender": "123", "device": "7"], androidID: device)
        }
        #expect(throws: Register3Request.Refusal(code: "INVALID_PARAMETERS")) {
            try Register3Request.parse(["app": "org.chromium.linux", "sender": "BKey"], androidID: device)
        }
        guard
            case .register(let apple) = try Register3Request.parse(
                ["app": "com.example", "sender": "123", "X-platform": "apple"], androidID: device)
        else {
            Issue.record("not a registration")
            return
        }
        #expect(apple.platform == .apple)
    }
}
