public import HeraldCore
public import HeraldProtocol
public import HeraldStorage
public import HeraldTelemetry
public import Logging

/// The push service side of Web Push (RFC 8030): takes a push message an application
/// server posts to one of the push channels Herald issued (a browser's `register3` channel,
/// a `HeraldClient` subscription), checks its VAPID credential (RFC 8292) against the
/// channel, and carries the encrypted body, which Herald cannot read, to the channel's
/// device: at once to a connected one, queued for one that is not, under the D and L rules.
public final class WebPushRelay: Sendable {
    public struct Configuration: Sendable {
        /// The base URL of the endpoints and message resources handed out.
        public var publicURL: String
        /// The origins a VAPID JWT's `aud` may name: Herald's own, and any the operator maps
        /// to it (Google's host names, for browsers pointed at Herald).
        public var audiences: Set<String>

        public init(publicURL: String, audiences: Set<String> = []) {
            let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
            self.publicURL = base
            self.audiences = audiences.union([WebOrigin.of(base)])
        }
    }

    /// A message taken: its id, the time to live kept, the URL that withdraws it, and the
    /// receipt subscription its receipt goes to when one was asked for.
    public struct Accepted: Sendable, Equatable {
        public var messageID: String
        public var ttlSeconds: Int64
        public var location: String
        public var receipts: String?
    }

    /// The prefix of the push endpoints handed out: `<public url>/wp/<channel token>`.
    public static let endpointPath = "/wp/"
    /// The prefix of message resources: `<public url>/wp/m/<channel token>/<message id>`.
    public static let messagePath = "/wp/m/"
    /// The prefix of receipt subscriptions: `<public url>/wp/r/<subscription>`.
    public static let receiptPath = "/wp/r/"
    /// The most receipts one read of a receipt subscription answers.
    public static let receiptsPerRead = 100

    public let configuration: Configuration
    private let store: any RegistrationStore & QueueStore & UpstreamStore
    private let path: DeliveryPath
    private let planner: DeliveryPlanner
    private let quotas: Quotas
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let logger: Logger
    /// Wakes waiting reads of receipt subscriptions when a receipt is written on this node.
    private let receiptSignal: PushReceiptSignal
    /// How often a waiting read looks at a store other nodes share (their receipts are
    /// announced there only); nil for a store of this node alone.
    private let sharedStoreLook: Duration?
    /// Checks senders' VAPID JWTs, each signature once.
    private let vapid: VAPIDVerifier
    /// How long a push waits for its connected device's acknowledgement before its row is
    /// written, as a one-to-one send does (`Dispatcher.acknowledgementWait`); nil for none.
    private let acknowledgementWait: DeliveryPath.Settle?

    public init(
        configuration: Configuration, store: any RegistrationStore & QueueStore & UpstreamStore, path: DeliveryPath,
        cluster: any Cluster = SingleNodeCluster(), quotas: Quotas, clock: any HeraldClock, metrics: HeraldMetrics,
        receiptSignal: PushReceiptSignal = PushReceiptSignal(), acknowledgementWait: DeliveryPath.Settle? = nil,
        logger: Logger
    ) {
        self.acknowledgementWait = acknowledgementWait
        self.receiptSignal = receiptSignal
        self.sharedStoreLook = cluster.isShared ? .seconds(2) : nil
        self.configuration = configuration
        self.vapid = VAPIDVerifier(audiences: configuration.audiences)
        self.store = store
        self.path = path
        self.planner = DeliveryPlanner(store: store, path: path, cluster: cluster)
        self.quotas = quotas
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// The endpoint of a push channel.
    public func endpoint(token: String) -> String {
        configuration.publicURL + Self.endpointPath + token
    }

    /// The channel token of one of this server's endpoints (`/wp/` or `/fcm/send/`), if the
    /// URL is one.
    public func token(ofEndpoint url: String) -> String? {
        for path in [Self.endpointPath, "/fcm/send/"] {
            let prefix = configuration.publicURL + path
            if url.hasPrefix(prefix), case let token = String(url.dropFirst(prefix.count)), !token.isEmpty,
                !token.contains("/")
            {
                return token
            }
        }
        return nil
    }

    /// Takes a push message for the channel `token`; throws a `WebPushRequest.Refusal`
    /// with the status the sender gets.
    public func push(_ request: WebPushRequest, token: String, credential: VAPID.Credential?) async throws
        -> Accepted
    {
        let channel = try await self.channel(token)
        let now = clock.now()
        let subscriptionKey = WebChannelBinding.publicKey(channel.sender)
        if let credential {
            do {
                try vapid.verify(credential, subscriptionKey: subscriptionKey, now: now)
            } catch {
                metrics.increment("herald_web_push_refused_total", [("reason", "vapid")])
                throw WebPushRequest.Refusal(status: error.isForbidden ? 403 : 401, reason: error.description)
            }
        } else if subscriptionKey != nil {
            throw WebPushRequest.Refusal(status: 401, reason: VAPID.Failure.missing.description)
        }
        if let wait = quotas.admitChannelMessage(token: token, now: now) {
            throw WebPushRequest.Refusal(
                status: 429, reason: "Too many messages to this push channel (SEMANTICS T6).", retryAfterSeconds: wait)
        }
        let receipts = try receiptSubscription(for: request, senderKey: credential?.key ?? [])
        let id = SecureRandom.token(bytes: 16)
        // A channel of a project (one made over Mozilla's push protocol, SEMANTICS W6) keeps
        // the message's record and events there; any other belongs to no project.
        let owner = channel.projectID ?? ""
        var entry = QueuedMessage(
            androidID: channel.androidID, token: channel.token, persistentID: id, messageID: id, projectID: owner,
            stanza: MCSFrame.webPushStanza(
                request, category: channel.appID, from: channel.sender, subtype: channel.subtype),
            createdAt: now, expiresAt: now.adding(seconds: request.ttlSeconds), collapseKey: request.topic,
            isHighPriority: request.urgency == .high, appID: channel.appID)
        entry.receiptID = receipts ?? ""
        // Expected before it is stored: the device may acknowledge it at once.
        if let receipts, request.ttlSeconds > 0 { receiptSignal.expect(persistentID: id, subscription: receipts) }
        var queue = [entry]
        if request.ttlSeconds == 0 {
            // Now or never (SEMANTICS D6): to a connection on this node, or for the hop to the
            // node holding the device, else dropped. Handed over here, it is not queued, so
            // its receipt is kept at once.
            let (handOver, stats) = try await planner.deliverNow([entry], now: now)
            let delivered = stats.contains { $0.counter == .delivered }
            queue = handOver
            if !owner.isEmpty {
                try await store.appendMessages(
                    [record(entry, request: request)], queue: [], limits: .unlimited,
                    stats: [DeliveryStat(entry.statKey, .accepted)] + (handOver.isEmpty ? stats : []))
            }
            metrics.increment(
                "herald_web_push_messages_total",
                [("outcome", delivered ? "delivered" : handOver.isEmpty ? "dropped" : "handed_over")])
            if delivered, let receipts {
                try await store.appendPushReceipts([
                    PushReceipt(subscription: receipts, token: token, messageID: id, acknowledgedAt: now)
                ])
                receiptSignal.announce([receipts])
            }
        } else {
            metrics.increment("herald_web_push_messages_total", [("outcome", "stored")])
        }
        if !queue.isEmpty {
            let limits = QueueLimits(ProjectSettings())
            // A message its device acknowledges within the wait needs no row; one whose receipt
            // is wanted is always written, as its receipt is kept with the row's acknowledgement.
            try await path.deliver(
                queue, maximumPending: limits.maximumPending, settle: receipts == nil ? acknowledgementWait : nil
            ) { toWrite, acknowledged in
                if !owner.isEmpty {
                    return try await store.appendMessages(
                        request.ttlSeconds == 0 ? [] : [record(entry, request: request)], queue: toWrite,
                        limits: limits,
                        stats: (request.ttlSeconds == 0 ? [] : [DeliveryStat(entry.statKey, .accepted)])
                            + acknowledged.map { $0.stat(.delivered) })
                }
                return toWrite.isEmpty
                    ? [] : try await store.appendMessages([], queue: toWrite, limits: limits, stats: [])
            }
        }
        return Accepted(
            messageID: id, ttlSeconds: request.ttlSeconds, location: messageResource(token: token, messageID: id),
            receipts: receipts)
    }

    /// The record of a push message to a project's channel, for its status and events: its
    /// body stays encrypted and unread, so the record tells its size and headers only.
    private func record(_ entry: QueuedMessage, request: WebPushRequest) -> StoredMessage {
        var webPush: [(key: String, value: JSONValue)] = [
            ("ttl", .number(Double(request.ttlSeconds))), ("urgency", .string(request.urgency.rawValue)),
            ("bytes", .number(Double(request.body.count))),
        ]
        if let topic = request.topic { webPush.append(("topic", .string(topic))) }
        return StoredMessage(
            id: entry.messageID, projectID: entry.projectID, targetKind: .token, target: entry.token,
            body: JSONValue.object([("token", .string(entry.token)), ("web_push", .object(webPush))]).rendered,
            createdAt: entry.createdAt, expiresAt: entry.expiresAt)
    }

    /// The receipt subscription a push message's receipt goes to: the one its `Push-Receipt`
    /// names (one of this service's made for the same sender key, else 400), a new one for
    /// `Prefer: respond-async`, or none.
    private func receiptSubscription(for request: WebPushRequest, senderKey: [UInt8]) throws(WebPushRequest.Refusal)
        -> String?
    {
        if let url = request.pushReceipt {
            let prefix = configuration.publicURL + Self.receiptPath
            let subscription = String(url.dropFirst(prefix.count))
            guard url.hasPrefix(prefix), PushReceipt.isSubscription(subscription) else {
                throw WebPushRequest.Refusal(
                    status: 400, reason: "Push-Receipt must be a receipt subscription of this push service.")
            }
            guard ReceiptSubscription.belongs(subscription, toSenderKey: senderKey) else {
                metrics.increment("herald_web_push_refused_total", [("reason", "receipt-subscription")])
                throw WebPushRequest.Refusal(
                    status: 400, reason: "Push-Receipt names a receipt subscription made for another sender.")
            }
            return subscription
        }
        return request.wantsReceipt ? ReceiptSubscription.make(senderKey: senderKey) : nil
    }

    /// The URL of a message resource, which a receipt names and `DELETE` withdraws.
    public func messageResource(token: String, messageID: String) -> String {
        configuration.publicURL + Self.messagePath + token + "/" + messageID
    }

    /// The URL of a receipt subscription.
    public func receiptSubscription(_ subscription: String) -> String {
        configuration.publicURL + Self.receiptPath + subscription
    }

    /// The receipts waiting in a receipt subscription, after forgetting those up to
    /// `acknowledgedThrough` (the sender has read them); when there are none, waits for one
    /// up to `wait`: woken when this node writes one, and on a shared store looking every
    /// two seconds too (another node's receipts are not announced here).
    public func receipts(subscription: String, acknowledgedThrough: Int64, wait: Duration) async throws
        -> [PushReceipt]
    {
        guard PushReceipt.isSubscription(subscription) else {
            throw WebPushRequest.Refusal(status: 404, reason: "No such receipt subscription.")
        }
        let deadline = ContinuousClock.now + wait
        var mark = receiptSignal.mark()
        var receipts = try await store.pushReceipts(
            subscription: subscription, acknowledgedThrough: acknowledgedThrough, limit: Self.receiptsPerRead)
        while receipts.isEmpty, case let left = deadline - ContinuousClock.now, left > .zero {
            await receiptSignal.wait(
                for: subscription, after: mark, upTo: sharedStoreLook.map { min($0, left) } ?? left)
            try Task.checkCancellation()
            mark = receiptSignal.mark()
            receipts = try await store.pushReceipts(
                subscription: subscription, acknowledgedThrough: 0, limit: Self.receiptsPerRead)
        }
        return receipts
    }

    /// Withdraws a message not yet delivered (RFC 8030 §6.2); false when it is gone.
    public func withdraw(token: String, messageID: String) async throws -> Bool {
        let channel = try await self.channel(token)
        return try await store.withdraw(androidID: channel.androidID, persistentID: messageID)
    }

    /// The live push channel `token` names: 404 for none, 410 for one unsubscribed.
    public func channel(_ token: String) async throws -> Registration {
        guard let channel = try await store.registration(token: token), channel.kind == .webChannel else {
            throw WebPushRequest.Refusal(status: 404, reason: "No push channel has this endpoint.")
        }
        guard channel.deletedAt == nil else {
            throw WebPushRequest.Refusal(status: 410, reason: "The push channel was unsubscribed.")
        }
        return channel
    }
}
