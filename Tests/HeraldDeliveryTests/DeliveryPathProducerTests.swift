import Crypto
import Foundation
import HeraldCore
import HeraldProtocol
import HeraldStorage
import HeraldTelemetry
import Logging
import Prometheus
import Testing

@testable import HeraldDelivery

/// Every producer reaches a device connected here through the one `DeliveryPath`: its
/// entry is offered to the device's session while its row is written, and the session is
/// told of the row once it is (SEMANTICS L2). The dispatcher stands for every send API
/// (v1, legacy, XMPP, the console and scheduled sends, whose entries for APNs tokens the
/// APNs forwarder then claims); the fanout engine's pages are covered by
/// `FanoutEngineTests.L2_devicesConnectedHereAreOfferedTheMessageBeforeThePageIsWritten`.
@Suite struct DeliveryPathProducerTests {
    let store = InMemoryStore()
    let clock = ManualClock()
    let metrics = HeraldMetrics(factory: PrometheusMetricsFactory())
    let project: Project
    let device: Device
    let token: String
    let path: DeliveryPath
    /// What the connected device's session was offered and told, by persistent id.
    let offered = FanoutEngineTests.Told()
    let told = FanoutEngineTests.Told()

    init() async throws {
        let instance = try await AppInstance.make(
            in: store,
            project: Project(
                id: "producers", number: 515_151, apiKey: "AIza-p", serverKey: "AAAA-p",
                createdAt: Timestamp(seconds: 1)),
            appID: "com.example.p", at: clock.now())
        (project, device, token) = (instance.project, instance.device, instance.token)
        path = DeliveryPath(clock: clock)
        let (offered, told) = (offered, told)
        // A session that declines every offer, as one still reading its queue does: each
        // entry is then written and announced, so both halves of the path are seen.
        let path = path
        path.register(
            androidID: device.androidID,
            ClosureMailbox(
                id: 1, wake: {}, replace: {}, stored: { told.add($0.persistentID) },
                offer: { entry, _ in
                    offered.add(entry.persistentID)
                    path.declined(androidID: entry.androidID, persistentID: entry.persistentID)
                    return true
                }))
    }

    /// The one entry the device was offered, once it was also told of its row.
    func deliveredOnce() throws -> String {
        let ids = offered.all
        try #require(ids.count == 1)
        #expect(told.all == ids)
        return ids[0]
    }

    func dispatcher() -> Dispatcher {
        Dispatcher(store: store, clock: clock, metrics: metrics, path: path, logger: Logger(label: "test"))
    }

    func request(_ message: String) throws -> SendRequest {
        try SendRequest.decode(Array(#"{"message":\#(message)}"#.utf8))
    }

    @Test func L2_aSendOfAnyAPIIsOfferedThroughThePathAndAnnouncedOnceWritten() async throws {
        let id = try await dispatcher().send(
            try request(#"{"token":"\#(token)","data":{"via":"v1"}}"#), project: project)
        #expect(try deliveredOnce().hasSuffix(id))
    }

    @Test func L2_aScheduledSendUnderItsChosenIdAndAnXMPPSendWithAReceiptTakeThePathToo() async throws {
        let scheduled = MessageID.make(at: clock.now())
        _ = try await dispatcher().send(
            try request(#"{"token":"\#(token)","data":{"via":"schedule"}}"#), project: project,
            receiptID: "xmpp-1", messageID: scheduled)
        #expect(try deliveredOnce().hasSuffix(scheduled))
    }

    @Test func L2_aWebPushMessageIsOfferedThroughThePath() async throws {
        let (relay, channel, credential) = try await webPush(path: path)
        let accepted = try await relay.push(
            WebPushRequest(ttlSeconds: 60, contentEncoding: "aes128gcm", body: Array(repeating: 1, count: 32)),
            token: channel, credential: credential)
        #expect(try deliveredOnce() == accepted.messageID)
    }

    /// L7: as a one-to-one send, a push its connected device acknowledges while the push
    /// waits gets no queue row; one whose receipt is wanted is written all the same.
    @Test func L7_aWebPushAcknowledgedWhileItWaitsGetsNoRow() async throws {
        let path = DeliveryPath(clock: clock)
        path.register(
            androidID: device.androidID,
            ClosureMailbox(
                id: 2, wake: {}, replace: {},
                offer: { entry, _ in
                    path.taken(androidID: entry.androidID, persistentID: entry.persistentID)
                    path.acknowledged(androidID: entry.androidID, [entry.persistentID])
                    return true
                }))
        let wait = DeliveryPath.Settle(quiet: .seconds(5), limit: .seconds(5))
        let (relay, channel, credential) = try await webPush(path: path, acknowledgementWait: wait)
        _ = try await relay.push(
            WebPushRequest(ttlSeconds: 60, contentEncoding: "aes128gcm", body: [1]), token: channel,
            credential: credential)
        #expect(try await store.queuedCount(androidID: device.androidID) == 0)
        _ = try await relay.push(
            WebPushRequest(ttlSeconds: 60, contentEncoding: "aes128gcm", body: [2], wantsReceipt: true),
            token: channel, credential: credential)
        #expect(try await store.queuedCount(androidID: device.androidID) == 1)
    }

    /// A relay over `path`, a push channel of the device and a VAPID credential for it.
    func webPush(path: DeliveryPath, acknowledgementWait: DeliveryPath.Settle? = nil) async throws -> (
        WebPushRelay, String, VAPID.Credential
    ) {
        let vapid = P256.Signing.PrivateKey()
        let channel = Registration.makeToken()
        try await store.createRegistration(
            Registration(
                token: channel, kind: .webChannel, projectID: nil,
                sender: Base64URL.encode(Array(vapid.publicKey.x963Representation)), appID: "org.chromium.linux",
                subtype: "wp:https://site.example/#1", platform: .web, androidID: device.androidID,
                createdAt: clock.now()))
        let relay = WebPushRelay(
            configuration: .init(publicURL: "https://push.example.com/"), store: store, path: path, quotas: Quotas(),
            clock: clock, metrics: metrics, acknowledgementWait: acknowledgementWait, logger: Logger(label: "test"))
        let header = Base64URL.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims = Base64URL.encode(
            Array(#"{"aud":"https://push.example.com","exp":\#(clock.now().seconds + 600)}"#.utf8))
        let signature = try vapid.signature(for: Data((header + "." + claims).utf8))
        let credential = VAPID.Credential(
            token: header + "." + claims + "." + Base64URL.encode(Array(signature.rawRepresentation)),
            key: Array(vapid.publicKey.x963Representation))
        return (relay, channel, credential)
    }

    @Test func L2_anExpiredUpstreamMessagesSendErrorIsOfferedThroughThePath() async throws {
        let intake = UpstreamIntake(
            store: store, path: path, clock: clock, metrics: metrics, logger: Logger(label: "test"))
        let refused = try await intake.receive(
            UpstreamRequest(
                messageID: "up-1", to: "515151@fcm.googleapis.com", category: "com.example.p", token: token,
                ttlSeconds: 1, data: ["k": "v"]),
            androidID: device.androidID)
        #expect(refused == nil)
        clock.advance(seconds: 5)
        #expect(try await intake.expire() == 1)
        _ = try deliveredOnce()
    }
}
