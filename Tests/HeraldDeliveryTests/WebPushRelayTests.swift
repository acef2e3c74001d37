import Crypto
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldProtocol
import HeraldStorage
import HeraldTelemetry
import Logging
import Prometheus
import Testing

/// The push service's relay (RFC 8030): a push message reaches its channel's device queue
/// as a browser expects it, body unchanged, under the channel's VAPID key.
@Suite struct WebPushRelayTests {
    let store = InMemoryStore()
    let clock = ManualClock()
    let vapid = P256.Signing.PrivateKey()
    let relay: WebPushRelay
    let device: Device

    /// What the gateway tells of the acknowledgements it writes.
    let receiptSignal = PushReceiptSignal()

    init() async throws {
        device = Device.make(at: clock.now())
        relay = WebPushRelay(
            configuration: .init(publicURL: "https://push.example.com/"), store: store, path: DeliveryPath(),
            quotas: Quotas(), clock: clock, metrics: HeraldMetrics(factory: PrometheusMetricsFactory()),
            receiptSignal: receiptSignal, logger: Logger(label: "test"))
        try await store.createDevice(device)
    }

    func channel(sender: String, deleted: Bool = false) async throws -> String {
        let token = Registration.makeToken()
        try await store.createRegistration(
            Registration(
                token: token, kind: .webChannel, projectID: nil, sender: sender, appID: "org.chromium.linux",
                subtype: "wp:https://site.example/#1", platform: .web, androidID: device.androidID,
                createdAt: clock.now(), deletedAt: deleted ? clock.now() : nil))
        return token
    }

    func credential(aud: String = "https://push.example.com") throws -> VAPID.Credential {
        let header = Base64URL.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"aud":"\#(aud)","exp":\#(clock.now().seconds + 600)}"#.utf8))
        let signature = try vapid.signature(for: Data((header + "." + claims).utf8))
        return VAPID.Credential(
            token: header + "." + claims + "." + Base64URL.encode(Array(signature.rawRepresentation)),
            key: Array(vapid.publicKey.x963Representation))
    }

    func refusal(_ body: () async throws -> Void) async -> Int? {
        do {
            try await body()
            return nil
        } catch let refusal as WebPushRequest.Refusal {
            return refusal.status
        } catch {
            return -1
        }
    }

    @Test func bothEncodingsReachTheQueueAsABrowserExpectsThemWithTheBodyUnchanged() async throws {
        let key = Base64URL.encode(Array(vapid.publicKey.x963Representation))
        let token = try await channel(sender: key)
        let aesgcm = WebPushRequest(
            ttlSeconds: 60, urgency: .high, topic: "t1", contentEncoding: "aesgcm", encryption: "salt=AAAA",
            cryptoKey: "dh=BBBB", body: [9, 8, 7])
        let accepted = try await relay.push(aesgcm, token: token, credential: try credential())
        #expect(accepted.location == "https://push.example.com/wp/m/\(token)/\(accepted.messageID)")
        #expect(relay.endpoint(token: token) == "https://push.example.com/wp/\(token)")
        let aes128gcm = WebPushRequest(
            ttlSeconds: 60, contentEncoding: "aes128gcm", body: Array(repeating: 5, count: 110))
        _ = try await relay.push(aes128gcm, token: token, credential: try credential())
        let queued = try await store.pendingMessages(androidID: device.androidID, after: 0, limit: 10, now: clock.now())
        #expect(queued.count == 2)
        let first = try McsProto_DataMessageStanza(serializedBytes: queued[0].stanza)
        #expect(first.category == "org.chromium.linux" && first.from == key && Array(first.rawData) == [9, 8, 7])
        #expect(
            first.appData.map { "\($0.key)=\($0.value)" } == [
                "subtype=wp:https://site.example/#1", "content-encoding=aesgcm", "encryption=salt=AAAA",
                "crypto-key=dh=BBBB",
            ])
        #expect(queued[0].isHighPriority && queued[0].collapseKey == "t1" && queued[0].projectID.isEmpty)
        let second = try McsProto_DataMessageStanza(serializedBytes: queued[1].stanza)
        #expect(Array(second.rawData) == Array(repeating: 5, count: 110) && !queued[1].isHighPriority)
        // Withdrawn before delivery: gone, and a second withdrawal finds nothing.
        #expect(try await relay.withdraw(token: token, messageID: queued[1].persistentID))
        #expect(try await relay.withdraw(token: token, messageID: queued[1].persistentID) == false)
    }

    @Test func aChannelMadeForAKeyTakesOnlyThatKeysVAPIDAndOneWithoutTakesAnyOrNone() async throws {
        let request = WebPushRequest(ttlSeconds: 60)
        let keyed = try await channel(
            sender: Base64URL.encode(Array(P256.Signing.PrivateKey().publicKey.x963Representation)))
        #expect(await refusal { _ = try await relay.push(request, token: keyed, credential: try credential()) } == 403)
        #expect(await refusal { _ = try await relay.push(request, token: keyed, credential: nil) } == 401)
        let open = try await channel(sender: "herald-web-push")
        #expect(await refusal { _ = try await relay.push(request, token: open, credential: nil) } == nil)
        #expect(await refusal { _ = try await relay.push(request, token: open, credential: try credential()) } == nil)
        #expect(
            await refusal {
                _ = try await relay.push(request, token: open, credential: try credential(aud: "https://elsewhere"))
            } == 401)
    }

    @Test func unknownUnsubscribedAndAppTokensAreNotPushChannels() async throws {
        let request = WebPushRequest(ttlSeconds: 60)
        #expect(await refusal { _ = try await relay.push(request, token: "nope", credential: nil) } == 404)
        let gone = try await channel(sender: "herald-web-push", deleted: true)
        #expect(await refusal { _ = try await relay.push(request, token: gone, credential: nil) } == 410)
    }

    @Test func D6_aTTL0MessageToADeviceNotConnectedIsDroppedNotStored() async throws {
        let token = try await channel(sender: "herald-web-push")
        _ = try await relay.push(WebPushRequest(ttlSeconds: 0), token: token, credential: nil)
        #expect(try await store.queuedCount(androidID: device.androidID) == 0)
    }

    /// RFC 8030 §5.1: a sender that asks for a receipt gets a receipt subscription, which
    /// it may name again with Push-Receipt; the receipt is kept when the device acknowledges,
    /// and a read that finds none waits for one.
    @Test func aReceiptAskedForArrivesWhenTheDeviceAcknowledges() async throws {
        let token = try await channel(sender: "herald-web-push")
        var asking = WebPushRequest(ttlSeconds: 60, wantsReceipt: true)
        let first = try await relay.push(asking, token: token, credential: nil)
        let subscription = try #require(first.receipts)
        #expect(PushReceipt.isSubscription(subscription))
        #expect(
            relay.receiptSubscription(subscription) == "https://push.example.com/wp/r/\(subscription)")
        asking.wantsReceipt = false
        asking.pushReceipt = relay.receiptSubscription(subscription)
        let second = try await relay.push(asking, token: token, credential: nil)
        #expect(second.receipts == subscription)
        let unasked = try await relay.push(WebPushRequest(ttlSeconds: 60), token: token, credential: nil)
        #expect(unasked.receipts == nil)
        #expect(try await relay.receipts(subscription: subscription, acknowledgedThrough: 0, wait: .zero).isEmpty)
        // The device acknowledges the first while a read waits: the read is woken when the
        // acknowledgement is written, not at the end of its wait.
        let started = ContinuousClock.now
        let waiting = Task {
            try await relay.receipts(subscription: subscription, acknowledgedThrough: 0, wait: .seconds(300))
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(
            try await store.acknowledge(
                androidID: device.androidID, persistentIDs: [first.messageID, unasked.messageID]) == 2)
        receiptSignal.acknowledged([first.messageID, unasked.messageID])
        let read = try await waiting.value
        #expect(ContinuousClock.now - started < .seconds(120))  // woken, not at the end of its wait
        #expect(read.map(\.messageID) == [first.messageID] && read[0].token == token)
        #expect(
            relay.messageResource(token: read[0].token, messageID: read[0].messageID) == first.location)
        #expect(try await store.acknowledge(androidID: device.androidID, persistentIDs: [second.messageID]) == 1)
        let rest = try await relay.receipts(
            subscription: subscription, acknowledgedThrough: read[0].sequence, wait: .zero)
        #expect(rest.map(\.messageID) == [second.messageID])
        // Another service's or a malformed receipt subscription is refused.
        asking.pushReceipt = "https://elsewhere.example/wp/r/\(subscription)"
        #expect(await refusal { _ = try await relay.push(asking, token: token, credential: nil) } == 400)
        asking.pushReceipt = "https://push.example.com/wp/r/short"
        #expect(await refusal { _ = try await relay.push(asking, token: token, credential: nil) } == 400)
        #expect(
            await refusal { _ = try await relay.receipts(subscription: "no", acknowledgedThrough: 0, wait: .zero) }
                == 404)
    }
}
