import Foundation
import HeraldCore
import HeraldStorage
import HeraldTelemetry
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

@testable import HeraldWebhooks

/// SEMANTICS E5: a webhook's turn posts its events in order, signed, moves its cursor past
/// each one its endpoint took, stops at the first that failed and keeps it for a retry, and
/// pauses a webhook whose target is not allowed without sending anything.
@Suite struct WebhookSenderTests {
    /// What the receiver was sent: each request's headers of interest and body.
    struct Received: Sendable {
        var eventID: String
        var webhookID: String
        var signature: String
        var body: [UInt8]
    }

    let clock = ManualClock()
    let project = "alpha-project"

    /// A SQLite store with the project, three events (accepted, refused, accepted) and a
    /// webhook posting to `url`, claimed by this node; runs `body` with the store and the
    /// claimed webhook.
    func withClaimedWebhook(
        url: String, types: Set<MessageEventType> = [],
        _ body: (SQLiteStore, Webhook) async throws -> Void
    ) async throws {
        let directory = createdTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/herald.sqlite")
        try await store.createProject(sampleProject(project), firstKey: sampleKey("k1", project: project))
        let now = clock.now()
        try await store.recordEvents([
            MessageEvent(type: .accepted, projectID: project, messageID: "m1", at: now),
            MessageEvent(type: .refused, reason: "T1", projectID: project, messageID: "m2", at: now),
            MessageEvent(type: .accepted, projectID: project, messageID: "m3", at: now),
        ])
        try await store.addWebhook(Webhook.make(projectID: project, url: url, types: types, cursor: 0, at: now))
        let claimed = try await store.claimDueWebhooks(
            now: now, until: now.adding(seconds: 60), holder: "node-a", limit: 4)
        try await body(store, try #require(claimed.first))
    }

    func sender(_ store: SQLiteStore, policy: WebhookTargetPolicy, metrics: HeraldMetrics) -> WebhookSender {
        WebhookSender(
            store: store, policy: policy, holder: "node-a", clock: clock,
            eventIDs: EventIDs(secret: Array(repeating: 7, count: 32)), metrics: metrics,
            logger: Logger(label: "test"))
    }

    /// Runs a receiver answering `status` to every post for the length of `body`.
    func withReceiver(
        status: HTTPResponse.Status,
        _ body: @Sendable (_ url: String, _ received: @Sendable () -> [Received]) async throws -> Void
    ) async throws {
        let received = Mutex<[Received]>([])
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            received.withLock {
                $0.append(
                    Received(
                        eventID: request.headers[.init("Herald-Event-Id")!] ?? "",
                        webhookID: request.headers[.init("Herald-Webhook-Id")!] ?? "",
                        signature: request.headers[.init("Herald-Signature")!] ?? "", body: Array(buffer: bytes)))
            }
            return Response(status: status)
        }
        try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            .test(.live) { client in
                let port = try #require(client.port)
                try await body("http://127.0.0.1:\(port)/hook") { received.withLock { $0 } }
            }
    }

    @Test func E5_aTurnPostsTheWantedEventsInOrderSignedAndMovesTheCursorPastEach() async throws {
        try await withReceiver(status: .noContent) { url, received in
            try await withClaimedWebhook(url: url, types: [.accepted]) { store, webhook in
                let metrics = CountedMetrics()
                let sender = sender(
                    store, policy: WebhookTargetPolicy(allowedHosts: ["127.0.0.1"]), metrics: metrics.metrics)
                #expect(await sender.work(on: webhook) == nil)
                await sender.clients.shutdown()

                let posts = received()
                // The refused event is not wanted: passed over, not posted.
                #expect(posts.map { try! JSONParser.parse($0.body)["message_id"]?.stringValue } == ["m1", "m3"])
                let ids = EventIDs(secret: Array(repeating: 7, count: 32)).project(project)
                #expect(posts.map(\.eventID) == [ids.id(sequence: 1), ids.id(sequence: 3)])
                for post in posts {
                    #expect(post.webhookID == webhook.id)
                    #expect(
                        WebhookSignature.verify(
                            header: post.signature, body: post.body, secret: webhook.secret, now: clock.now().seconds))
                }
                let saved = try #require(try await store.webhooks(projectID: project).first)
                #expect(saved.cursor == 3 && saved.failures == 0 && saved.state == .active)
                #expect(metrics.count("herald_webhook_requests_total{outcome=\"delivered\"}") == 2)
            }
        }
    }

    @Test func E5_anEventTheEndpointRefusesStopsTheTurnAndIsTriedAgainLater() async throws {
        try await withReceiver(status: .internalServerError) { url, received in
            try await withClaimedWebhook(url: url) { store, webhook in
                let metrics = CountedMetrics()
                let sender = sender(
                    store, policy: WebhookTargetPolicy(allowedHosts: ["127.0.0.1"]), metrics: metrics.metrics)
                let retry = await sender.work(on: webhook)
                await sender.clients.shutdown()

                // The first event failed: nothing after it was tried, and it is tried again in a second.
                #expect(received().count == 1)
                #expect(retry == clock.now().adding(seconds: 1))
                let saved = try #require(try await store.webhooks(projectID: project).first)
                #expect(saved.cursor == 0 && saved.failures == 1 && saved.state == .active)
                #expect(saved.lastErrors.count == 1 && saved.lastErrors[0].hasPrefix("HTTP 500 for event "))
                #expect(metrics.count("herald_webhook_requests_total{outcome=\"failed\"}") == 1)
                // Released: claimable again once due.
                clock.advance(seconds: 1)
                let again = try await store.claimDueWebhooks(
                    now: clock.now(), until: clock.now().adding(seconds: 60), holder: "node-b", limit: 4)
                #expect(again.map(\.id) == [webhook.id])
            }
        }
    }

    @Test func E5_aTargetThePolicyRefusesIsPausedWithoutARequest() async throws {
        try await withReceiver(status: .ok) { url, received in
            try await withClaimedWebhook(url: url) { store, webhook in
                let metrics = CountedMetrics()
                // Loopback is not allowed unless the operator allows it.
                let sender = sender(store, policy: WebhookTargetPolicy(), metrics: metrics.metrics)
                #expect(await sender.work(on: webhook) == nil)
                await sender.clients.shutdown()

                #expect(received().isEmpty)
                let saved = try #require(try await store.webhooks(projectID: project).first)
                #expect(saved.state == .paused && saved.cursor == 0 && saved.lastErrors.count == 1)
                #expect(metrics.count("herald_webhook_requests_total{outcome=\"refused\"}") == 1)
            }
        }
    }

    @Test func E5_anEndpointThatCannotBeReachedIsToldAsUnreachable() async throws {
        // A port nothing listens on: bound, then closed.
        let port = try await Application(
            router: Router(), configuration: .init(address: .hostname("127.0.0.1", port: 0))
        )
        .test(.live) { client in try #require(client.port) }
        try await withClaimedWebhook(url: "http://127.0.0.1:\(port)/hook") { store, webhook in
            let metrics = CountedMetrics()
            let sender = sender(
                store, policy: WebhookTargetPolicy(allowedHosts: ["127.0.0.1"]), metrics: metrics.metrics)
            #expect(await sender.work(on: webhook) != nil)
            await sender.clients.shutdown()
            let saved = try #require(try await store.webhooks(projectID: project).first)
            #expect(
                saved.lastErrors == [
                    "unreachable for event \(EventIDs(secret: Array(repeating: 7, count: 32)).project(project).id(sequence: 1))"
                ])
        }
    }
}
