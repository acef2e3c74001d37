import HeraldCore
import HeraldProtocol
import HeraldStorage
import Testing

@testable import HeraldHandOffs

/// The hand-off to FCM's pure rules (SEMANTICS R3, R4, R7): the request a queue entry becomes,
/// FCM's verdicts, the pacing after them, and the key file's checks.
@Suite struct FCMRelayRulesTests {
    static func entry(stanza: [UInt8], expiresAt: Int64 = 100_000) -> QueuedMessage {
        QueuedMessage(
            androidID: 5, token: "google:APA91bTOKEN", persistentID: "p1", messageID: "m1", projectID: "p",
            stanza: stanza, createdAt: Timestamp(milliseconds: 0), expiresAt: Timestamp(milliseconds: expiresAt))
    }

    static func stanza(_ json: String, ttl: Int32 = 100) throws -> [UInt8] {
        var stanza = McsProto_DataMessageStanza()
        (stanza.from, stanza.category) = ("123", "")
        stanza.rawData = .init(Array(json.utf8))
        stanza.ttl = ttl
        var contentType = McsProto_AppData()
        (contentType.key, contentType.value) = ("content-type", "application/fcm+json")
        stanza.appData = [contentType]
        return try stanza.serializedBytes()
    }

    @Test func theMessageGoesAsWrittenToTheEntrysTokenWithTheTimeToLiveLeft() throws {
        let stanza = try Self.stanza(
            #"{"token":"old","data":{"k":"v"},"android":{"ttl":"100s","priority":"HIGH"},"apns":{"headers":{"a":"b"}}}"#
        )
        let request = FCMRequest(
            Self.entry(stanza: stanza), template: try FCMRequest.Template(stanza: stanza),
            now: Timestamp(milliseconds: 40_000))
        let message = try #require(try JSONParser.parse(request.body)["message"])
        #expect(message["token"]?.stringValue == "google:APA91bTOKEN")
        // A topic send handed to Google's topic (R7) keeps its topic and names no token.
        let topic = try Self.stanza(#"{"topic":"news","data":{}}"#)
        let toTopic = FCMRequest(
            Self.entry(stanza: topic), template: try FCMRequest.Template(stanza: topic),
            now: Timestamp(milliseconds: 0))
        let topicMessage = try JSONParser.parse(toTopic.body)["message"]
        #expect(topicMessage?["topic"]?.stringValue == "news" && topicMessage?["token"] == nil)
        #expect(message["android"]?["ttl"]?.stringValue == "60s")
        #expect(message["android"]?["priority"]?.stringValue == "HIGH")
        #expect(message["apns"]?["headers"]?["a"]?.stringValue == "b")
        #expect(message["data"]?["k"]?.stringValue == "v")
        let nowOrNever = try Self.stanza(#"{"data":{}}"#, ttl: 0)
        let immediate = FCMRequest(
            Self.entry(stanza: nowOrNever), template: try FCMRequest.Template(stanza: nowOrNever),
            now: Timestamp(milliseconds: 0))
        #expect(try JSONParser.parse(immediate.body)["message"]?["android"]?["ttl"]?.stringValue == "0s")
        #expect(throws: FCMRequest.Unusable.self) { try FCMRequest.Template(stanza: [1, 2, 3]) }
    }

    static func answer(_ status: Int, _ code: String = "", message: String = "", retryAfter: String? = nil)
        -> HTTP2Answer
    {
        let details = code.isEmpty ? "" : #","details":[{"errorCode":"\#(code)"}]"#
        return HTTP2Answer(
            status: status, retryAfter: retryAfter,
            body: Array(#"{"error":{"code":\#(status),"message":"\#(message)"\#(details)}}"#.utf8))
    }

    @Test func googlesVerdictsMapBack() {
        #expect(HandOffVerdict(HTTP2Answer(status: 200, body: [])) == .delivered)
        #expect(HandOffVerdict(Self.answer(404, "UNREGISTERED")) == .unregistered(reason: "UNREGISTERED"))
        #expect(
            HandOffVerdict(
                Self.answer(
                    400, "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token"))
                == .unregistered(reason: "INVALID_ARGUMENT"))
        #expect(
            HandOffVerdict(Self.answer(400, "INVALID_ARGUMENT", message: "Invalid JSON"))
                == .refused(reason: "INVALID_ARGUMENT"))
        #expect(
            HandOffVerdict(Self.answer(429, "QUOTA_EXCEEDED", retryAfter: "17"))
                == .retry(reason: "QUOTA_EXCEEDED", retryAfterSeconds: 17, atLeastSeconds: 60))
        #expect(
            HandOffVerdict(Self.answer(503, "UNAVAILABLE", retryAfter: "5"))
                == .retry(reason: "UNAVAILABLE", retryAfterSeconds: 5, atLeastSeconds: 0))
        #expect(HandOffVerdict(nil) == .retry(reason: "no answer", retryAfterSeconds: nil, atLeastSeconds: 0))
        #expect(HandOffVerdict(Self.answer(401)) == .renewToken)
        #expect(HandOffVerdict(Self.answer(401, "THIRD_PARTY_AUTH_ERROR")) == .renewToken)
        #expect(
            HandOffVerdict(Self.answer(403, "THIRD_PARTY_AUTH_ERROR"))
                == .credentialRefused(reason: "THIRD_PARTY_AUTH_ERROR"))
        #expect(HandOffVerdict(Self.answer(403, "SENDER_ID_MISMATCH")) == .unregistered(reason: "SENDER_ID_MISMATCH"))
    }

    @Test func backoffHonoursRetryAfterAndTheQuotasMinuteWithJitter() {
        var pacing = HandOffPacing<FCMRelayCredential>()
        let now = Timestamp(milliseconds: 1_000_000)
        #expect(pacing.failed(now: now, retryAfterSeconds: 17, atLeastSeconds: 60) == now.adding(seconds: 60))
        #expect(pacing.failed(now: now, retryAfterSeconds: 90, atLeastSeconds: 60) == now.adding(seconds: 90))
        let jittered = pacing.failed(now: now, jitter: 1)
        #expect(jittered == now.adding(milliseconds: 6000))
        // Until then none of the project's entries go, new ones included; a reached service frees them.
        #expect(
            pacing.admission(credential: nil, now: now.adding(seconds: 5))
                == .wait(until: jittered, reason: "backing off"))
        #expect(pacing.admission(credential: nil, now: jittered) == .send)
        pacing.reached()
        #expect(pacing.admission(credential: nil, now: now) == .send)
    }

    @Test func aKeyFileIsCheckedBeforeItIsKept() throws {
        func file(_ members: [(String, String)]) -> [UInt8] {
            JSONValue.stringObject(members).renderedBytes
        }
        let valid: [(String, String)] = [
            ("type", "service_account"), ("project_id", "my-app"), ("private_key_id", "k1"),
            ("client_email", "relay@my-app.iam.gserviceaccount.com"),
            ("token_uri", "https://oauth2.googleapis.com/token"),
            ("private_key", Self.rsaKeyPEM),
        ]
        let credential = try FCMServiceAccountFile.credential(
            bytes: file(valid), projectID: "herald-app", now: Timestamp(milliseconds: 0))
        #expect(credential.googleProjectID == "my-app" && credential.projectID == "herald-app")
        #expect(!credential.summary.contains("PRIVATE"))
        for (name, value) in [
            ("type", "user"), ("client_email", "nobody"), ("token_uri", "ftp://x"), ("private_key", "not a key"),
            ("project_id", "a/b"),
        ] {
            let changed = valid.map { $0.0 == name ? ($0.0, value) : $0 }
            #expect(throws: FCMServiceAccountFile.Failure.self) {
                try FCMServiceAccountFile.credential(
                    bytes: file(changed), projectID: "p", now: Timestamp(milliseconds: 0))
            }
        }
        #expect(throws: FCMServiceAccountFile.Failure.self) {
            try FCMServiceAccountFile.credential(
                bytes: Array(repeating: 32, count: 70_000), projectID: "p", now: Timestamp(milliseconds: 0))
        }
    }

    static let rsaKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQCjeOa8xZohxrJf
        +zJ4J7jasjPB24jQFuZBMt5DzAk3bpxy6lg8EX1sPudSlRc/n2jpEKGRfvGvLqaB
        QWDlD1bcw+uPRXSv9hcQxoL5Kw8uK1yzaiKGCwc4Z0PJt1X9D+sqiTxhj6+SkqGp
        BizU55OfdpBz10YkpoZcno9va1mYdgP2SJ6B1zFm2S65mQhTuZR/0bQdexlB9qNO
        ABOQYDZvnEBMBEJSoHmch90gFL3y09nWUJWwAdxCVGKwM4mcRYbgxSWV/TG+XUxy
        PB3hMq4dbZSjKnyF7lnExE7yqYanh/nvO/mfDtOSyP25ngeqtJreZQg13A5m7QoJ
        ffDNK+kTAgMBAAECggEAMLGHPYy4xD3dDUUUfAENCavSSfj8UEu564rc9SH2Tto2
        ZO6UONRW4WL9YbaCVdPEmsP29JF1KWMCevcAB0sh6yG67ZLZVr69kSQoiFMAsxZ8
        hv7i6L2pOW5dHV1skjRnLuTxJPh5anYeDGyH9yVB7lqRXcgunyUxWa5reFtoNUbc
        Lw+FsUKUOSka1YrEOiyMUJ9eieS2sQL7MkbgZNw/v6t2GSSnRh8WjPmLfPw07FyT
        z+sZe3UsHL+P+omwHtoWOWSfAQTGnm0OQ+AalLcKk04AD4QSMIjwljwWOL6iZ0/s
        ClznhcS3QdrAj60eF1tBNhMsbsPD8pftLH4E9mMFbQKBgQDRyJVUMhg39pCs4i1p
        wE+2nH3SAEszhKIvYVz3vyxIYZ4c80RsEX0R0AIgWdePLYWNEQ+dOaC8uN+pW9TH
        geBLV7uLSbBQsGNrAFyyrwYdn20P3sqv/Pq7I2iQ9JGtS8Yfli9u2IfeDbLabLNS
        YDay1NTtkzk7NhyNwlj4IwK4vQKBgQDHfHIZORn/Qgo0L78oMuY5fDtF8F/GS+Fv
        nPUCIX1pTiYjVrhROZmGeJzj5GydxxbdpQqBAILRa106SfFKBR9KFdQnBsEjIdJL
        VtcoW4vdYU7jXOYCR7+W2gA8KYBlfhxpbZ5eUv3wkzdm6naJWo03PyJSfNA6gKwV
        slpzJffODwKBgA2LHJDl9whN48M1iucD4mGQstLG8BPwYSQb7guUjQBTRQjrb6Rm
        cKOgwTJjenYk4zVbP53P5Z+pc88UPaVvrhJPJK12YWqkKJb03AcxI3zwGPNoV7+K
        3okMXSjWkT0V4kGRyZgnZIYibkSJtf4AdiePc/uugIhhEvDX9jR21islAoGABTIl
        mqiVF8P1lhRkSzzAKGEm/hRbukOBtLGG5C5RIOwLLEJ2/I6ehBUiKQFrHtTvsIg6
        9M85mRDN1dXVNhNaFEjrRLT1VN/tpU62vfNcekCtmFh0GT0bLWeyN97w3DPjs49K
        X7STrq928vRKcBtusDCxySo9FjkBwnLpzjP/91sCgYBJQW2lqJJU1G/TH/4lxRgW
        x3/vLtXFG/rDagyimamYcdjyCv+V3Zwm2770RRdbRhtIVBrMO0nORmPFsmLGoiLb
        z4Az6F/tO+s5MBBGGJaBLsFk/0gJIxYGJ+AiTuSwRQnpAHUJnd97PBkXH7tPS972
        Vox5QgwUeW2ZCZfmKJ0YeA==
        -----END PRIVATE KEY-----
        """
}
