import Foundation
import HeraldCore
import HeraldProtocol
import HeraldStorage
import Testing

@testable import HeraldHandOffs

/// The pure rules of the hand-off to APNs: verdicts, provider token renewal, pacing, the
/// request an entry becomes.
@Suite struct HandOffRulesTests {
    @Test func apnsAnswersBecomeVerdictsAsAppleDocumentsThem() {
        #expect(HandOffVerdict(status: 200, reason: nil) == .delivered)
        #expect(HandOffVerdict(status: 410, reason: "Unregistered") == .unregistered(reason: "Unregistered"))
        #expect(HandOffVerdict(status: 400, reason: "BadDeviceToken") == .unregistered(reason: "BadDeviceToken"))
        #expect(
            HandOffVerdict(status: 400, reason: "DeviceTokenNotForTopic")
                == .unregistered(reason: "DeviceTokenNotForTopic"))
        #expect(HandOffVerdict(status: 403, reason: "ExpiredProviderToken") == .renewToken)
        #expect(
            HandOffVerdict(status: 403, reason: "InvalidProviderToken")
                == .credentialRefused(reason: "InvalidProviderToken"))
        #expect(HandOffVerdict(status: 403, reason: "BadCertificate") == .credentialRefused(reason: "BadCertificate"))
        #expect(HandOffVerdict(status: 429, reason: "TooManyRequests") == .retry(reason: "TooManyRequests"))
        #expect(HandOffVerdict(status: 503, reason: "ServiceUnavailable") == .retry(reason: "ServiceUnavailable"))
        #expect(HandOffVerdict(status: 413, reason: "PayloadTooLarge") == .refused(reason: "PayloadTooLarge"))
        #expect(HandOffVerdict(status: 400, reason: "BadPriority") == .refused(reason: "BadPriority"))
    }

    @Test func aProviderTokenLivesFiftyMinutesAndIsNeverReplacedWithinTwenty() {
        var schedule = ProviderTokenSchedule()
        let start = Timestamp(seconds: 1_000_000)
        #expect(schedule.needsToken(at: start))
        schedule.issued(at: start)
        #expect(!schedule.needsToken(at: start.adding(seconds: 49 * 60)))
        #expect(schedule.needsToken(at: start.adding(seconds: 50 * 60)))
        #expect(!schedule.mayRenewEarly(at: start.adding(seconds: 19 * 60)))
        #expect(schedule.mayRenewEarly(at: start.adding(seconds: 20 * 60)))
    }

    @Test func failuresBackOffAndARefusedCredentialWaitsUntilItChanges() throws {
        var pacing = HandOffPacing<APNsCredential>()
        let now = Timestamp(seconds: 1_000)
        #expect(pacing.failed(now: now) == now.adding(seconds: 1))
        #expect(pacing.failed(now: now) == now.adding(seconds: 2))
        for _ in 0..<10 { _ = pacing.failed(now: now) }
        #expect(pacing.failed(now: now) == now.adding(seconds: HandOffPacing<APNsCredential>.maximumBackoffSeconds))
        pacing.reached()
        #expect(pacing.failures == 0)
        let credential = APNsCredential(
            projectID: "p", secret: .signingKey(keyID: "KEY1234567", teamID: "TEAM123456", privateKeyPEM: "x"),
            bundleID: "com.example.ios", environment: .both, createdAt: now)
        let started = pacing.credentialRefused(credential, reason: "InvalidProviderToken", now: now)
        let repeated = pacing.credentialRefused(credential, reason: "InvalidProviderToken", now: now)
        #expect(started && !repeated)
        #expect(
            pacing.admission(credential: credential, now: now.adding(seconds: 1))
                == .wait(until: now.adding(seconds: 6), reason: "InvalidProviderToken"))
        var replaced = credential
        replaced.createdAt = now.adding(seconds: 2)
        #expect(pacing.admission(credential: replaced, now: now.adding(seconds: 3)) == .send)
        #expect(pacing.admission(credential: credential, now: now.adding(seconds: 300)) == .send)
    }

    @Test func anEntryBecomesItsRequestWithAStableAPNsID() throws {
        var stanza = McsProto_DataMessageStanza()
        stanza.from = "123"
        stanza.category = "com.example.ios"
        stanza.rawData = .init(Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        stanza.appData = [("content-type", "application/apns+json"), ("apns-push-type", "alert"), ("google.x", "y")]
            .map { key, value in
                var item = McsProto_AppData()
                item.key = key
                item.value = value
                return item
            }
        let address = try #require(APNsAddress(deviceToken: String(repeating: "0F", count: 32), isSandbox: false))
        let entry = QueuedMessage(
            androidID: 7, token: "t", persistentID: "0:123%abc", messageID: "m", projectID: "p",
            stanza: try stanza.serializedBytes(), createdAt: Timestamp(seconds: 1), expiresAt: Timestamp(seconds: 2))
        let request = try APNsRequest(HandOff(entry: entry, destination: .apns(address)), bundleID: "com.example.ios")
        #expect(request.path == "/3/device/" + String(repeating: "0f", count: 32))
        #expect(request.payload == Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        let id = APNsRequest.apnsID(persistentID: "0:123%abc")
        #expect(request.headers.map(\.0) == ["apns-topic", "apns-id", "apns-push-type"])
        #expect(request.headers[1].1 == id && id == APNsRequest.apnsID(persistentID: "0:123%abc"))
        #expect(id != APNsRequest.apnsID(persistentID: "0:124%abc"))
        #expect(id.count == 36 && id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        var android = entry
        android.stanza = []
        #expect(throws: APNsRequest.Unusable.self) {
            try APNsRequest(HandOff(entry: android, destination: .apns(address)), bundleID: "com.example.ios")
        }
    }

    @Test func apnsAddressesAreHexTokensInTheSDKsTupleForm() {
        let token = String(repeating: "AB", count: 32)
        let address = APNsAddress(deviceToken: token, isSandbox: true)
        #expect(address?.tuple == "s_" + token.lowercased())
        #expect(APNsAddress(tuple: "p_" + token)?.isSandbox == false)
        #expect(APNsAddress(deviceToken: "xyz", isSandbox: false) == nil)
        #expect(APNsAddress(deviceToken: String(repeating: "a", count: 63), isSandbox: false) == nil)
        #expect(APNsAddress(tuple: token) == nil)
    }
}
