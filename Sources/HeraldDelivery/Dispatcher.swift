public import HeraldCore
import HeraldProtocol
public import HeraldStorage
public import Logging
import SwiftProtobuf

/// Accepts validated messages: resolves their target, stores them durably with their
/// device-queue entries, wakes the devices' connections, and counts the outcome
/// (DESIGN.md, "the path of one message").
public final class Dispatcher: Sendable {
    private let store: any HeraldStore
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let registry: DeviceRegistry
    private let logger: Logger

    public init(
        store: any HeraldStore, clock: any HeraldClock, metrics: HeraldMetrics, registry: DeviceRegistry, logger: Logger
    ) {
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.registry = registry
        self.logger = logger
    }

    /// Accepts one send and answers the new message id (SEMANTICS L1: accepted, not
    /// delivered). A dry run runs every check, including the registration look-up, and
    /// stores nothing.
    public func send(_ request: SendRequest, project: Project) async throws -> String {
        let message = request.message
        let now = clock.now()
        var registration: Registration?
        let targetKind: String
        let target: String
        switch message.target {
        case .token(let token):
            registration = try await appRegistration(token: token, project: project)
            (targetKind, target) = ("token", token)
        case .fid(let fid):
            guard let found = try await store.registration(installationID: fid, projectID: project.id) else {
                throw HeraldError.unregistered
            }
            registration = found
            (targetKind, target) = ("fid", fid)
        case .topic(let name):
            (targetKind, target) = ("topic", name)
        case .condition(let condition):
            (targetKind, target) = ("condition", condition.description)
        }
        if request.validateOnly {
            metrics.increment("herald_messages_dry_run_total", [("project", project.id)])
            return MessageID.dryRun
        }
        let id = MessageID.make(at: now)
        let ttl = message.androidTTLSeconds ?? project.settings.message.maximumTTLSeconds
        let expiresAt = now.adding(seconds: ttl)
        var queue: [QueuedMessage] = []
        if let registration {
            queue.append(
                try queueEntry(message, id: id, registration: registration, project: project, now: now, ttl: ttl))
        }
        let stored = StoredMessage(
            id: id, projectID: project.id, targetKind: targetKind, target: target, body: message.body.rendered,
            createdAt: now, expiresAt: expiresAt)
        try await store.appendMessages([stored], queue: queue)
        metrics.increment("herald_messages_accepted_total", [("project", project.id)])
        for entry in queue { registry.wake(androidID: entry.androidID) }
        logger.debug(
            "message accepted",
            metadata: [
                "project": "\(project.id)", "message": "\(id)", "target": "\(targetKind)",
                "token": "\(registration.map { Registration.redacted($0.token) } ?? "-")",
            ])
        return id
    }

    /// The app registration behind a token, checked against the sending project (SEMANTICS C3).
    private func appRegistration(token: String, project: Project) async throws -> Registration {
        guard let registration = try await store.registration(token: token) else { throw HeraldError.unregistered }
        guard registration.kind == .app, registration.projectID == project.id else {
            throw HeraldError.senderIDMismatch
        }
        return registration
    }

    private func queueEntry(
        _ message: HeraldCore.Message, id: String, registration: Registration, project: Project, now: Timestamp,
        ttl: Int64
    ) throws -> QueuedMessage {
        let context = DeliveryTailor.Context(
            messageID: id, registration: registration, project: project, sentAt: now, ttlSeconds: ttl)
        let stanza: McsProto_DataMessageStanza
        do {
            stanza = try DeliveryTailor.stanza(for: message, context)
        } catch {
            logger.error(
                "registration keys unusable", metadata: ["token": "\(Registration.redacted(registration.token))"])
            throw HeraldError.unregistered
        }
        return QueuedMessage(
            androidID: registration.androidID, token: registration.token, persistentID: id, messageID: id,
            projectID: project.id, stanza: try stanza.serializedBytes(), createdAt: now,
            expiresAt: now.adding(seconds: ttl))
    }
}
