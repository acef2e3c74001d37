public import HeraldCore
import HeraldProtocol
public import HeraldStorage
public import HeraldTelemetry
public import Logging

/// Takes devices' upstream messages for their app servers: checks each against the
/// sending device's registration, the 4 KB limit, SEMANTICS T5 and the messages the device
/// and its project have waiting (`UpstreamMessage.maximumWaitingPerDevice`, the project's
/// `upstream-waiting`), keeps it durably
/// (`UpstreamStore`) and tells this node's XMPP connections of the project. Past their time
/// to live, kept messages are dropped and their devices get a `send_error`.
public final class UpstreamIntake: Sendable {
    /// Hears the project of every message kept here (this node's XMPP connections).
    public typealias Arrival = @Sendable (_ projectID: String) -> Void

    private let store: any RegistrationStore & CredentialStore & QueueStore & UpstreamStore
    private let path: DeliveryPath
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let limits: UpstreamLimits
    private let logger: Logger
    /// The project with an id, from the node's credential cache; nil reads the store.
    private let projects: (@Sendable (String) -> Project?)?
    private let arrival: Arrival?

    public init(
        store: any RegistrationStore & CredentialStore & QueueStore & UpstreamStore, path: DeliveryPath,
        clock: any HeraldClock, metrics: HeraldMetrics,
        limits: UpstreamLimits = UpstreamLimits(), projects: (@Sendable (String) -> Project?)? = nil,
        arrival: Arrival? = nil, logger: Logger
    ) {
        self.arrival = arrival
        self.projects = projects
        self.store = store
        self.path = path
        self.clock = clock
        self.metrics = metrics
        self.limits = limits
        self.logger = logger
    }

    /// Keeps a message from the device `androidID`; nil once it is durable, otherwise why
    /// it was refused. A message the device sent before (same id) is not kept twice.
    public func receive(_ request: UpstreamRequest, androidID: UInt64) async throws -> UpstreamError? {
        guard !request.messageID.isEmpty, request.messageID.utf8.count <= UpstreamMessage.maximumMessageIDBytes,
            let senderID = request.senderID
        else { return .invalidParameters }
        guard let registration = try await registration(for: request, androidID: androidID, senderID: senderID),
            let projectID = registration.projectID, let project = try await project(id: projectID),
            project.number == senderID
        else { return .invalidParameters }
        guard request.dataBytes <= UpstreamMessage.maximumDataBytes else { return .messageTooBig }
        let now = clock.now()
        let waiting = try await store.upstreamWaiting(projectID: project.id, androidID: androidID)
        guard waiting.device < UpstreamMessage.maximumWaitingPerDevice,
            waiting.project < project.settings.upstreamWaiting,
            limits.admit(project, androidID: androidID, now: now)
        else {
            metrics.increment("herald_quota_rejections_total", [("quota", "upstream")])
            return .tooManyMessages
        }
        // A TTL of 0 means now or never: it gets a second to reach an app server.
        let ttl = min(
            max(request.ttlSeconds ?? UpstreamMessage.defaultTTLSeconds, 1), project.settings.message.maximumTTLSeconds)
        let message = UpstreamMessage(
            projectID: project.id, kind: .message, messageID: request.messageID, token: registration.token,
            category: registration.appID, androidID: androidID,
            data: request.data.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }, createdAt: now,
            expiresAt: now.adding(seconds: ttl))
        try await store.appendUpstream([message])
        metrics.increment("herald_upstream_messages_total", [("project", project.id)])
        arrival?(project.id)
        return nil
    }

    /// The live app registration the message is sent from: the token it names, or the
    /// device's registration of its app for the sender; nil unless it is the device's own.
    private func registration(for request: UpstreamRequest, androidID: UInt64, senderID: Int64) async throws
        -> Registration?
    {
        let found: Registration?
        if request.token.isEmpty {
            var candidates: [Registration] = []
            for registration in try await store.registrations(androidID: androidID)
            where registration.appID == request.category {
                if let projectID = registration.projectID, try await project(id: projectID)?.number == senderID {
                    candidates.append(registration)
                }
            }
            found = candidates.first
        } else {
            found = try await store.registration(token: request.token)
        }
        guard let found, found.androidID == androidID, found.kind == .app, found.deletedAt == nil else { return nil }
        return found
    }

    private func project(id: String) async throws -> Project? {
        if let projects { return projects(id) }
        return try await store.project(id: id)
    }

    /// Drops up to `limit` messages whose time to live ran out and queues a `send_error`
    /// for each one's device; answers how many were dropped.
    @discardableResult
    public func expire(limit: Int = 1000) async throws -> Int {
        let now = clock.now()
        let expired = try await store.deleteExpiredUpstream(now: now, limit: limit)
        var errors: [QueuedMessage] = []
        var settings: [String: ProjectSettings] = [:]
        for message in expired where message.kind == .message {
            guard let project = try await project(id: message.projectID) else { continue }
            settings[project.id] = project.settings
            let id = MessageID.make(at: now)
            errors.append(
                QueuedMessage(
                    androidID: message.androidID, token: message.token, persistentID: id, messageID: id,
                    projectID: message.projectID,
                    stanza: MCSFrame.sendErrorStanza(
                        messageID: message.messageID, error: .serviceNotAvailable, category: message.category,
                        senderID: project.number, token: message.token),
                    createdAt: now, expiresAt: now.adding(seconds: QueuedMessage.deletionSignalLifetimeSeconds),
                    isHighPriority: true, appID: message.category))
        }
        for (projectID, projectSettings) in settings {
            let limits = QueueLimits(projectSettings)
            try await path.deliver(errors.filter { $0.projectID == projectID }, maximumPending: limits.maximumPending) {
                toWrite, _ in try await store.appendMessages([], queue: toWrite, limits: limits, stats: [])
            }
        }
        if !errors.isEmpty { metrics.increment("herald_upstream_expired_total", by: errors.count) }
        return expired.count
    }
}
