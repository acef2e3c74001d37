public import AsyncHTTPClient
import Foundation
public import HeraldCore
public import HeraldStorage
public import HeraldTelemetry
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
public import ServiceLifecycle

/// Posts projects' events to their webhooks (SEMANTICS E5): each webhook's events in
/// sequence order, one request an event, signed (`WebhookSignature`), at least once. The
/// event log is the outbox: a webhook's cursor moves past an event only once its endpoint
/// answered 2xx, so nothing is lost when the process dies; a failing event is tried again
/// with a doubling wait (`Webhook.failed`) and the webhook is paused after a day of failures.
///
/// One node at a time holds a webhook (`WebhookStore.claimDueWebhooks`), so with several
/// nodes each event still goes out once, barring a node that dies between an answer and
/// writing the cursor.
public struct WebhookSender: Service {
    let store: any EventStore & WebhookStore
    /// A client per target host, each connecting to the address the policy checked.
    let clients = WebhookClients()
    let policy: WebhookTargetPolicy
    /// This node's name as the holder of the webhooks it claims.
    let holder: String
    let clock: any HeraldClock
    /// The ids events are posted with.
    let eventIDs: EventIDs
    let metrics: HeraldMetrics
    let logger: Logger

    /// How long a claim lasts; renewed by every write of progress.
    static let leaseSeconds: Int64 = 60
    /// The least time between two looks for due webhooks while events keep coming; how often
    /// a store that gives no signal is looked at.
    static let pace: Duration = .milliseconds(200)
    /// Events read for a webhook at once; a turn sends at most these before the webhook
    /// is released, so that others waiting for a turn get one.
    static let batch = 100
    /// Webhooks worked on at once on a node, and of one project.
    static let webhooksAtOnce = 16
    static let webhooksOfAProjectAtOnce = 4
    /// How long one request may take, its answer's head and body together.
    static let requestTimeout: Duration = .seconds(10)

    public init(
        store: any EventStore & WebhookStore, policy: WebhookTargetPolicy, holder: String, clock: any HeraldClock,
        eventIDs: EventIDs, metrics: HeraldMetrics, logger: Logger
    ) {
        self.store = store
        self.eventIDs = eventIDs
        self.policy = policy
        self.holder = holder
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Claims due webhooks whenever a turn is free: when events are written or a webhook is
    /// created or resumed (`WorkSignals`), when a webhook that failed here is due again, as
    /// soon as a turn ends, and at least every `WorkWaiter.defaultFallback`; while events keep
    /// coming, at most once a `pace`. Works on each webhook in a task of its own: a receiver
    /// that answers slowly, or not at all, delays only its own webhook.
    public func run() async throws {
        let turns = NIOLockedValueBox(
            WebhookTurns(atOnce: Self.webhooksAtOnce, perProject: Self.webhooksOfAProjectAtOnce))
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let lag = store.eventCommitLagMilliseconds
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    var waiter = WorkWaiter(.events, of: store.work, pace: Self.pace, polling: Self.pace)
                    var woken = false
                    while !Task.isCancelled {
                        let mark = waiter.mark()
                        wake.yield()
                        // Events too recent to be sure of are looked for again once they have settled.
                        var dueIn = woken && lag > 0 ? Duration.milliseconds(lag) : nil
                        if let retry = turns.withLockedValue({ $0.nextRetry }) {
                            let untilRetry = Duration.milliseconds(
                                max(0, retry.milliseconds - clock.now().milliseconds))
                            dueIn = min(dueIn ?? untilRetry, untilRetry)
                        }
                        woken = await waiter.wait(after: mark, dueIn: dueIn)
                    }
                    wake.finish()
                }
                for await _ in wakes {
                    guard turns.withLockedValue({ $0.room }) > 0 else { continue }
                    let now = clock.now()
                    turns.withLockedValue { $0.looked(at: now) }
                    let claimed: [Webhook]
                    do {
                        claimed = try await store.claimDueWebhooks(
                            now: now, until: now.adding(seconds: Self.leaseSeconds), holder: holder,
                            limit: Self.webhooksAtOnce)
                    } catch {
                        if !Task.isCancelled {
                            logger.warning("webhooks not claimed", metadata: ["error": "\(error)"])
                        }
                        continue
                    }
                    for webhook in turns.withLockedValue({ $0.start(claimed) }) {
                        group.addTask {
                            let retry = await work(on: webhook)
                            turns.withLockedValue { $0.finished(webhook, retryAt: retry) }
                            wake.yield()
                        }
                    }
                }
            }
        }
        await clients.shutdown()
    }

    /// Sends a claimed webhook's events in order until none is left, one fails, or a turn's
    /// `batch` went out, writing its progress after each; releases it at the end. Answers
    /// when it is to be tried again after a failure; nil when none stopped it.
    func work(on claimed: Webhook) async -> Timestamp? {
        var webhook = claimed
        var sent = 0
        let ids = eventIDs.project(webhook.projectID)
        do {
            let target: WebhookTargetPolicy.Target
            do {
                target = try policy.check(webhook.url)
            } catch {
                // A target that is not allowed stays refused: paused at once, with the reason;
                // counted, so that the failing-webhooks alert fires.
                webhook = webhook.failed(error.description, at: clock.now())
                webhook.state = .paused
                metrics.increment("herald_webhook_requests_total", [("outcome", "refused")])
                try await store.saveWebhook(webhook, holder: holder, release: true)
                logger.warning("webhook target refused", metadata: ["webhook": "\(webhook.id)", "error": "\(error)"])
                return nil
            }
            while !Task.isCancelled {
                // Every event is read, the ones the webhook does not want to be passed over.
                let events = try await store.settledEvents(
                    projectID: webhook.projectID, after: webhook.cursor, limit: Self.batch, filter: EventFilter(),
                    now: clock.now())
                guard !events.isEmpty else { break }
                for event in events {
                    guard webhook.wants(event) else {
                        webhook.cursor = event.sequence
                        continue
                    }
                    if let failure = await post(event, id: ids.id(sequence: event.sequence), to: target, webhook) {
                        // Stopped by a shutdown: not the endpoint's failure; the event goes again
                        // at the next start, which claims again what this node held.
                        if Task.isCancelled { return nil }
                        webhook = webhook.failed(failure, at: clock.now())
                        metrics.increment("herald_webhook_requests_total", [("outcome", "failed")])
                        if webhook.state == .paused {
                            logger.warning(
                                "webhook paused", metadata: ["webhook": "\(webhook.id)", "error": "\(failure)"])
                        }
                        try await store.saveWebhook(webhook, holder: holder, release: true)
                        return webhook.state == .paused ? nil : webhook.nextAttemptAt
                    }
                    metrics.increment("herald_webhook_requests_total", [("outcome", "delivered")])
                    sent += 1
                    webhook = webhook.delivered(through: event.sequence, at: clock.now())
                    // Progress is written after each event: a node that dies resends one at most.
                    guard try await store.saveWebhook(webhook, holder: holder, release: false) else { return nil }
                }
                if events.count < Self.batch || sent >= Self.batch { break }
            }
            try await store.saveWebhook(
                webhook.delivered(through: webhook.cursor, at: clock.now()), holder: holder, release: true)
        } catch {
            logger.warning("webhook progress not written", metadata: ["webhook": "\(webhook.id)", "error": "\(error)"])
        }
        return nil
    }

    /// Posts one event; answers why it failed, or nil when the endpoint took it (2xx). A
    /// failure to connect or to read an answer is kept as "unreachable", which the project's
    /// users see; what the socket said goes to the operator's log.
    func post(_ event: MessageEvent, id: String, to target: WebhookTargetPolicy.Target, _ webhook: Webhook) async
        -> String?
    {
        let body = event.json(id: id).renderedBytes
        let (client, retired) = clients.client(for: target)
        for old in retired { try? await old.shutdown() }
        var request = HTTPClientRequest(url: target.url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Herald-Webhooks/1")
        request.headers.add(name: "Herald-Event-Id", value: id)
        request.headers.add(name: "Herald-Webhook-Id", value: webhook.id)
        request.headers.add(
            name: "Herald-Signature",
            value: WebhookSignature.header(secret: webhook.secret, body: body, at: clock.now().seconds))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: TimeAmount(Self.requestTimeout))
            // The answer's body is not used; it is read (up to a bound) so the connection is reused.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(response.status.code) else {
                return "HTTP \(response.status.code) for event \(id)"
            }
            return nil
        } catch {
            // Cut short by a stop: not the endpoint's failure, and the caller does not count it.
            if Task.isCancelled { return "stopped for event \(id)" }
            logger.warning(
                "webhook unreachable",
                metadata: ["webhook": "\(webhook.id)", "address": "\(target.address)", "error": "\(error)"])
            return "unreachable for event \(id)"
        }
    }
}
