import HeraldCore
import HeraldStorage
import HeraldTelemetry
import Logging
import Synchronization

/// Counts devices' receipts (impressions and opens, SEMANTICS L7) against the messages they
/// name, for the devices those messages were addressed to.
final class ReceiptRecorder: Sendable {
    private let store: any RegistrationStore & TopicStore & QueueStore & StatsStore
    private let metrics: HeraldMetrics
    private let logger: Logger
    /// Receipts being counted now, bounded by `maximumReceiptsInProgress`.
    private let receiptsInProgress = Atomic<Int>(0)
    static let maximumReceiptsInProgress = 64
    static let receiptRetryMilliseconds = 200

    /// The project a message belongs to, for its per-device-events setting (SEMANTICS E2).
    private let projects: @Sendable (String) -> Project?

    init(
        store: any RegistrationStore & TopicStore & QueueStore & StatsStore, metrics: HeraldMetrics,
        projects: @escaping @Sendable (String) -> Project?, logger: Logger
    ) {
        self.store = store
        self.metrics = metrics
        self.projects = projects
        self.logger = logger
    }

    /// Counts an impression or an open against the message's project, app and label, once
    /// per device, message and kind, and only from a device the message was addressed to
    /// (`addressee(of:on:)`): a receipt from any other device is dropped.
    ///
    /// A device is sent a message while the message is being written, so its impression
    /// can come back before the write is done: an unknown message is looked for once more
    /// after `receiptRetryMilliseconds`, then the receipt is dropped. At most
    /// `maximumReceiptsInProgress` receipts are worked on at once; past that they are dropped.
    /// Each dropped receipt is counted in `herald_receipts_refused_total` by its reason: `busy`,
    /// `not-addressed`, or `store-error` when the store failed (and the log says how).
    func record(_ counter: DeliveryCounter, messageID: String, androidID: UInt64) async {
        guard receiptsInProgress.add(1, ordering: .relaxed).newValue <= Self.maximumReceiptsInProgress else {
            receiptsInProgress.subtract(1, ordering: .relaxed)
            metrics.increment("herald_receipts_refused_total", [("reason", "busy")])
            return
        }
        defer { receiptsInProgress.subtract(1, ordering: .relaxed) }
        do {
            try await count(counter, messageID: messageID, androidID: androidID)
        } catch {
            // Not the device's fault: the receipt is lost, and counted as the store's.
            metrics.increment("herald_receipts_refused_total", [("reason", "store-error")])
            logger.warning(
                "receipt not counted: the store failed", metadata: ["message": "\(messageID)", "error": "\(error)"])
        }
    }

    private func count(_ counter: DeliveryCounter, messageID: String, androidID: UInt64) async throws {
        var found = try await store.message(id: messageID)
        if found == nil {
            try? await Task.sleep(for: .milliseconds(Self.receiptRetryMilliseconds))
            found = try await store.message(id: messageID)
        }
        guard let message = found, let registration = try await addressee(of: message, on: androidID) else {
            metrics.increment("herald_receipts_refused_total", [("reason", "not-addressed")])
            return
        }
        // A receipt of a topic or condition message is counted for the message, unless the
        // project keeps each app instance's events (SEMANTICS E2).
        let stat = DeliveryStat(
            DeliveryStatKey(
                projectID: message.projectID, at: message.createdAt, appID: registration.appID,
                label: message.analyticsLabel),
            counter,
            fact: DeliveryFact(
                messageID: message.id, token: registration.token,
                eachKept: message.targetKind == .token || message.targetKind == .fid
                    || projects(message.projectID)?.settings.perDeviceEvents == true))
        _ = try await store.recordReceipt(stat, messageID: message.id, androidID: androidID)
    }

    /// The registration on this device that `message` was addressed to: its token or
    /// installation, a member of its device group, or one subscribed as its topic or
    /// condition asks; nil when none is.
    private func addressee(of message: StoredMessage, on androidID: UInt64) async throws -> Registration? {
        let registrations = try await store.registrations(androidID: androidID).filter {
            $0.projectID == message.projectID
        }
        switch message.targetKind {
        case .token:
            if let direct = registrations.first(where: { $0.token == message.target }) { return direct }
            let group = try await store.deviceGroup(
                projectID: message.projectID, name: nil, notificationKey: message.target)
            return registrations.first { group?.members.contains($0.token) == true }
        case .fid:
            return registrations.first { $0.installationID == message.target }
        case .topic, .condition:
            // Only subscriptions made before the message was sent: the fanout reached those.
            let condition = message.targetKind == .topic ? nil : try? Condition.parse(message.target)
            for registration in registrations where registration.createdAt <= message.createdAt {
                let topics = Set(
                    try await store.subscriptions(token: registration.token).filter {
                        $0.createdAt <= message.createdAt
                    }.map(\.topic))
                if condition.map({ $0.matches(topics.contains) }) ?? topics.contains(message.target) {
                    return registration
                }
            }
            return nil
        }
    }
}
