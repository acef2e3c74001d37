public import HeraldCore
import HeraldProtocol
public import HeraldStorage
public import HeraldTelemetry
public import Logging
import SwiftProtobuf

/// Accepts validated messages: resolves their target, applies the delivery rules
/// (SEMANTICS D1–D6, L5, L6), stores them durably with their device-queue entries, wakes
/// the devices' connections, and counts every outcome (L7).
public final class Dispatcher: Sendable {
    public typealias Store = RegistrationStore & TopicStore & QueueStore & StatsStore & FanoutStore & UpstreamStore
        & FCMRelayCredentialStore
    private let store: any Store
    /// The nodes sharing the store; with several, a device's rate (T6) is counted in the store.
    private let cluster: any Cluster
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let path: DeliveryPath
    private let planner: DeliveryPlanner
    private let fanouts: FanoutEngine?
    private let quotas: Quotas
    private let logger: Logger

    /// How long a one-to-one message to a connected device waits for its acknowledgement
    /// before its queue row is written: `limit` in all, and no longer than 1 ms after the
    /// last news from the device. Nil (no wait) for a zero limit.
    public static func acknowledgementWait(limit: Duration) -> DeliveryPath.Settle? {
        guard limit > .zero else { return nil }
        return DeliveryPath.Settle(quiet: min(limit, .milliseconds(1)), limit: limit)
    }

    /// The wait by default: 3 ms, which a device on the same network answers within.
    public static let defaultAcknowledgementWait = acknowledgementWait(limit: .milliseconds(3))
    private let acknowledgementWait: DeliveryPath.Settle?

    public init(
        store: any Store, clock: any HeraldClock, metrics: HeraldMetrics, path: DeliveryPath,
        fanouts: FanoutEngine? = nil, quotas: Quotas = Quotas(),
        acknowledgementWait: DeliveryPath.Settle? = Dispatcher.defaultAcknowledgementWait,
        cluster: any Cluster = SingleNodeCluster(), logger: Logger
    ) {
        self.cluster = cluster
        self.acknowledgementWait = acknowledgementWait
        self.quotas = quotas
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.path = path
        self.planner = DeliveryPlanner(store: store, path: path, cluster: cluster)
        self.fanouts = fanouts
        self.logger = logger
    }

    /// Accepts one send and answers the new message id (SEMANTICS L1: accepted, not
    /// delivered). A dry run runs every check, including the registration look-up, and
    /// stores nothing.
    ///
    /// With a `receiptID` (an XMPP message sent with `delivery_receipt_requested`), the
    /// device's acknowledgement of a message to one app instance leaves a receipt for the
    /// project's app servers (`UpstreamStore`); messages to topics and conditions have none.
    ///
    /// A `messageID` chosen beforehand (a scheduled send's) is the id the message is stored under.
    public func send(_ request: SendRequest, project: Project, receiptID: String = "", messageID: String? = nil)
        async throws -> String
    {
        let message = request.message
        let now = clock.now()
        let addressee: Addressee
        let targetKind: TargetKind
        let target: String
        // With several nodes, a device's rate (T6) is counted in the store, read with its
        // registration; a dry run stores nothing, and is not counted.
        let countingRecentBefore = cluster.isShared && !request.validateOnly ? now : nil
        switch message.target {
        case .token(let token):
            let found = try await store.recipient(token: token, countingRecentBefore: countingRecentBefore)
            if found == nil,
                let group = try await store.deviceGroup(projectID: project.id, name: nil, notificationKey: token)
            {
                addressee = .audience(.deviceGroup(notificationKey: group.notificationKey))
            } else if found == nil, !request.isHandOff,
                try await store.fcmRelayCredential(projectID: project.id) != nil
            {
                // SEMANTICS R1: a token Herald did not issue, handed to FCM; a dry run stores nothing.
                if request.validateOnly { return dryRun(project: project) }
                addressee = .instance(try await relayed(token, project: project, message: message, now: now))
            } else {
                addressee = .instance(
                    try await live(
                        found, project: project, message: message, now: now, countUnregistered: !request.validateOnly))
            }
            (targetKind, target) = (.token, token)
        case .fid(let fid):
            addressee = .instance(
                try await live(
                    try await store.recipient(
                        installationID: fid, projectID: project.id, countingRecentBefore: countingRecentBefore),
                    project: project, message: message, now: now, countUnregistered: !request.validateOnly))
            (targetKind, target) = (.fid, fid)
        case .topic(let name):
            addressee = .audience(.topic(name))
            (targetKind, target) = (.topic, name)
        case .condition(let condition):
            addressee = .audience(.condition(condition.description))
            (targetKind, target) = (.condition, condition.description)
        }
        if case .audience = addressee, let fanouts, !fanouts.hasRoom(for: project) {
            throw HeraldError.quotaExceeded(
                subject: "fanouts", retryAfterSeconds: 5,
                message: "Too many topic and group messages are waiting to be sent for this project.",
                legacyName: "TopicsMessageRateExceeded")
        }
        if request.validateOnly { return dryRun(project: project) }
        let id = messageID ?? MessageID.make(at: now)
        let addressed = Addressed(id: id, kind: targetKind, target: target, project: project, now: now)
        switch addressee {
        case .audience(let audience):
            try await fanOut(message, addressed, to: audience, isHandOff: request.isHandOff)
        case .instance(let recipient):
            try await deliver(message, addressed, to: recipient, receiptID: receiptID)
        }
        // Counted once the message is stored: a send that failed was not accepted.
        metrics.increment("herald_messages_accepted_total", [("project", project.id)])
        return id
    }

    /// Whom a send reaches: one app instance, or the members of a topic, condition or device
    /// group, whom the fanout engine finds.
    private enum Addressee {
        case instance(Recipient)
        case audience(FanoutJob.Audience)
    }

    /// An accepted message's id, target and project, and when it was accepted.
    private struct Addressed {
        var id: String
        var kind: TargetKind
        var target: String
        var project: Project
        var now: Timestamp
    }

    /// A dry run's answer: every check passed, and nothing was stored.
    private func dryRun(project: Project) -> String {
        metrics.increment("herald_messages_dry_run_total", [("project", project.id)])
        return MessageID.dryRun
    }

    /// A message to a topic, condition or group: stored once with its fanout job, which the
    /// fanout engine expands (SEMANTICS T3).
    private func fanOut(
        _ message: HeraldCore.Message, _ addressed: Addressed, to audience: FanoutJob.Audience, isHandOff: Bool
    ) async throws {
        let (id, project, now) = (addressed.id, addressed.project, addressed.now)
        let ttl = message.androidTTLSeconds ?? project.settings.message.maximumTTLSeconds
        let accepted = DeliveryStat(
            DeliveryStatKey(projectID: project.id, at: now, appID: "", label: message.analyticsLabel), .accepted)
        let record = stored(message, addressed, ttl: ttl)
        let job = FanoutJob(
            messageID: id, projectID: project.id, audience: audience, body: record.body, createdAt: now,
            expiresAt: record.expiresAt)
        try await store.createFanout(record, job: job, stats: [accepted])
        fanouts?.submit(job)
        if case .deviceGroup = audience { return }
        if project.settings.relayTopics, !isHandOff, try await store.fcmRelayCredential(projectID: project.id) != nil {
            try await relayToGoogle(message, id: id, project: project, now: now)
        }
    }

    /// A message to one app instance: within its device's rate (T6), offered to its device
    /// when connected here, stored with its queue entry, or handed to the push service its
    /// registration names.
    private func deliver(
        _ message: HeraldCore.Message, _ addressed: Addressed, to recipient: Recipient, receiptID: String
    ) async throws {
        let (id, project, now) = (addressed.id, addressed.project, addressed.now)
        let registration = recipient.registration
        if cluster.isShared {
            let recent: RecentMessages
            if let counted = recipient.recent {
                recent = counted
            } else {
                // A store that does not count with its read.
                let windows = RecentMessages.windows(before: now)
                recent = try await cluster.recentMessages(
                    to: [registration.token] + (registration.installationID.map { [$0] } ?? []),
                    minuteSince: windows.minute, hourSince: windows.hour)
            }
            try quotas.checkDeviceMessage(recent: recent, project: project, now: now)
        } else {
            try quotas.admitDeviceMessage(token: registration.token, project: project, now: now)
        }
        let plan: DeliveryPlanner.Plan
        do {
            plan = try await planner.plan(
                message, id: id, registration: registration, project: project, now: now,
                lastConnected: recipient.lastConnectedAt)
        } catch WebPushEncryption.Failure.tooLarge(let bytes) {
            throw HeraldError.invalidArgument(
                "The message is \(bytes) bytes once encrypted for the browser's push service, over its "
                    + "\(WebPushEncryption.maximumBodyBytes).")
        } catch let error as WebPushEncryption.Failure {
            logger.error(
                "registration keys unusable",
                metadata: ["token": "\(Registration.redacted(registration.token))", "error": "\(error)"])
            throw HeraldError.unregistered
        }
        var entry = plan.entry
        entry?.receiptID = receiptID
        if var immediate = plan.immediate {
            immediate.receiptID = receiptID
            let (handOver, stats) = try await planner.deliverNow([immediate], now: now)
            guard let first = handOver.first else {
                try await store.record(plan.stats + stats)
                if !receiptID.isEmpty, stats.contains(where: { $0.counter == .delivered }) {
                    // Handed to the device's connection with no row to acknowledge: sent now.
                    try await store.appendUpstream([
                        UpstreamMessage.receipt(
                            projectID: project.id, originalMessageID: receiptID, token: registration.token,
                            category: registration.appID, androidID: registration.androidID, at: now)
                    ])
                }
                return
            }
            entry = first
        }
        let ttl = entry.map { ($0.expiresAt.milliseconds - now.milliseconds) / 1000 } ?? 0
        // A device connected here gets the message while its row is written (L2): its
        // session takes it only if storing it cannot change what the queue holds. Should the
        // write fail, the sender gets an error for a message the device may have seen. The
        // row waits a moment for the device's acknowledgement, which makes it needless.
        let record = stored(message, addressed, ttl: ttl)
        let queueLimits = QueueLimits(project.settings)
        // A row whose receipt is wanted is written even when its device acknowledges it at
        // once: the acknowledgement of the row leaves the receipt in the same transaction.
        let acknowledged = try await path.deliver(
            entry.map { [$0] } ?? [], maximumPending: queueLimits.maximumPending,
            settle: receiptID.isEmpty ? acknowledgementWait : nil
        ) { toWrite, acknowledged in
            try await store.appendMessages(
                [record], queue: toWrite, limits: queueLimits,
                stats: plan.stats + acknowledged.map { $0.stat(.delivered) })
        }
        if !acknowledged.isEmpty {
            metrics.increment("herald_messages_acknowledged_before_written_total", by: acknowledged.count)
        }
        logger.debug(
            "message accepted",
            metadata: [
                "project": "\(project.id)", "message": "\(id)", "token": "\(Registration.redacted(registration.token))",
            ])
    }

    /// The registration that holds a token Herald did not issue for its hand-off to FCM
    /// (SEMANTICS R1), on a hand-off device of its own; a send racing this one to the same
    /// token finds the registration the other made.
    private func relayed(_ token: String, project: Project, message: HeraldCore.Message, now: Timestamp) async throws
        -> Recipient
    {
        let device = try await store.createHandOffDevice(at: now)
        let registration = Registration.relayedToFCM(
            token: token, projectID: project.id, sender: String(project.number), androidID: device.androidID, at: now)
        do {
            try await store.createRegistration(registration)
        } catch {
            guard let made = try await store.recipient(token: token, countingRecentBefore: nil) else { throw error }
            return try await live(made, project: project, message: message, now: now, countUnregistered: true)
        }
        logger.info(
            "token handed to fcm from now on",
            metadata: ["project": "\(project.id)", "token": "\(Registration.redacted(token))"])
        return Recipient(registration: registration, lastConnectedAt: .some(nil))
    }

    /// Queues a topic or condition send once more for Google's topic or condition of the same
    /// name (SEMANTICS R7), on the project's topics registration, made the first time.
    private func relayToGoogle(_ message: HeraldCore.Message, id: String, project: Project, now: Timestamp)
        async throws
    {
        let token = Registration.fcmTopicsToken(projectID: project.id)
        let registration: Registration
        if let known = try await store.registration(token: token) {
            registration = known
        } else {
            registration = try await relayed(token, project: project, message: message, now: now).registration
        }
        var addressed = message
        switch message.target {
        case .topic(let name):
            addressed.body = .object((message.body.objectMembers ?? []) + [(key: "topic", value: .string(name))])
        case .condition(let condition):
            addressed.body = .object(
                (message.body.objectMembers ?? []) + [(key: "condition", value: .string(condition.description))])
        case .token, .fid: return
        }
        let plan = try await planner.plan(addressed, id: id, registration: registration, project: project, now: now)
        guard let entry = plan.entry ?? plan.immediate else { return }
        _ = try await store.appendMessages([], queue: [entry], limits: .unlimited, stats: [])
    }

    /// The live app registration a token or installation names, checked against the
    /// sending project (SEMANTICS C3, L6).
    private func live(
        _ found: Recipient?, project: Project, message: HeraldCore.Message, now: Timestamp, countUnregistered: Bool
    ) async throws -> Recipient {
        guard let found else { throw HeraldError.unregistered }
        let registration = found.registration
        guard registration.kind == .app, registration.projectID == project.id else {
            throw HeraldError.senderIDMismatch
        }
        if registration.deletedAt != nil {
            if countUnregistered {
                try await store.record([
                    DeliveryStat(
                        DeliveryStatKey(
                            projectID: project.id, at: now, appID: registration.appID, label: message.analyticsLabel),
                        .unregistered)
                ])
            }
            throw HeraldError.unregistered
        }
        return found
    }

    private func stored(_ message: HeraldCore.Message, _ addressed: Addressed, ttl: Int64) -> StoredMessage {
        StoredMessage(
            id: addressed.id, projectID: addressed.project.id, targetKind: addressed.kind, target: addressed.target,
            body: message.body.rendered, createdAt: addressed.now, expiresAt: addressed.now.adding(seconds: ttl),
            analyticsLabel: message.analyticsLabel ?? "")
    }
}
