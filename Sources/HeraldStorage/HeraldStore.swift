public import HeraldCore

/// Everything Herald keeps, as the union of its roles. Each part of Herald asks for the
/// role it needs; a backend (in memory, SQLite, PostgreSQL) implements them all and passes
/// one conformance suite.
public protocol HeraldStore:
    CredentialStore, RegistrationStore, QueueStore, TopicStore, FanoutStore, StatsStore, UpstreamStore,
    ConsoleStore, ScheduleStore, APNsCredentialStore, FCMRelayCredentialStore, WebPushKeyStore, HandOffStore,
    EventStore, WebhookStore
{
    /// How many times this store went to its database.
    var calls: StoreCalls { get }
}

extension QueueStore {
    /// Stores accepted messages with no device-queue entries.
    public func appendMessages(_ messages: [StoredMessage]) async throws {
        try await appendMessages(messages, queue: [], limits: .unlimited, stats: [])
    }

    /// Stores accepted messages and queue entries with no queue limits.
    public func appendMessages(_ messages: [StoredMessage], queue: [QueuedMessage]) async throws {
        try await appendMessages(messages, queue: queue, limits: .unlimited, stats: [])
    }
}

/// Why a store refused a change.
public enum StoreError: Error, Sendable, Equatable {
    /// A unique value is taken; the associated text says which.
    case conflict(String)
    /// The row the change refers to does not exist.
    case notFound(String)
    /// A per-row limit would be exceeded.
    case limit(String)
    /// The store cannot be reached (a shared store's database is down, or failing over);
    /// the caller may try again shortly.
    case unavailable(String)
}

/// An accepted message as the store keeps it.
public struct StoredMessage: Sendable, Hashable {
    /// The message id (the last part of its name).
    public var id: String
    /// The project that sent it.
    public var projectID: String
    /// What it was sent to.
    public var targetKind: TargetKind
    /// The token, topic name, condition text or installation id.
    public var target: String
    /// The canonical message JSON.
    public var body: String
    /// When it was accepted.
    public var createdAt: Timestamp
    /// When its time to live runs out.
    public var expiresAt: Timestamp
    /// Its `analytics_label` (the Android one, else the common one), under which its
    /// receipts are counted (SEMANTICS L7); empty for none.
    public var analyticsLabel: String

    public init(
        id: String, projectID: String, targetKind: TargetKind, target: String, body: String, createdAt: Timestamp,
        expiresAt: Timestamp, analyticsLabel: String = ""
    ) {
        self.analyticsLabel = analyticsLabel
        self.id = id
        self.projectID = projectID
        self.targetKind = targetKind
        self.target = target
        self.body = body
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
