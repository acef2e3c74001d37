public import HeraldCore
public import HeraldStorage
public import Logging

/// Accepts validated messages: resolves their target, stores them durably, and counts
/// the outcome (DESIGN.md, "the path of one message").
public final class Dispatcher: Sendable {
    private let store: any HeraldStore
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let logger: Logger

    public init(store: any HeraldStore, clock: any HeraldClock, metrics: HeraldMetrics, logger: Logger) {
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Accepts one send and answers the new message id (SEMANTICS L1: accepted, not
    /// delivered). A dry run runs every check and stores nothing.
    public func send(_ request: SendRequest, project: Project) async throws -> String {
        let message = request.message
        let now = clock.now()
        let targetKind: String
        let target: String
        switch message.target {
        case .token, .fid:
            // Registration tokens are issued by the device endpoints; a token no device
            // registered is not a valid destination.
            throw HeraldError.unregistered
        case .topic(let name):
            (targetKind, target) = ("topic", name)
        case .condition(let condition):
            (targetKind, target) = ("condition", condition.description)
        }
        if request.validateOnly {
            metrics.increment("herald_messages_dry_run_total", [("project", project.id)])
            return MessageID.dryRun
        }
        let ttl = message.androidTTLSeconds ?? project.settings.message.maximumTTLSeconds
        let stored = StoredMessage(
            id: MessageID.make(at: now), projectID: project.id, targetKind: targetKind, target: target,
            body: message.body.rendered, createdAt: now, expiresAt: now.adding(seconds: ttl))
        try await store.appendMessages([stored])
        metrics.increment("herald_messages_accepted_total", [("project", project.id)])
        logger.debug(
            "message accepted",
            metadata: ["project": "\(project.id)", "message": "\(stored.id)", "target": "\(targetKind)"])
        return stored.id
    }
}
