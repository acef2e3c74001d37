public import HeraldCore

/// Everything Herald keeps: projects, credentials, secrets and messages.
///
/// One protocol with one conformance suite for every backend (in memory, SQLite,
/// PostgreSQL). Every method is a transaction of its own; a method that returns has
/// made its change durable.
public protocol HeraldStore: Sendable {
    /// Creates a project together with its first service-account key.
    /// Throws `StoreError.conflict` when the id, number or a key is taken.
    func createProject(_ project: Project, firstKey: ServiceAccountKey) async throws

    /// The project with this id, if any.
    func project(id: String) async throws -> Project?

    /// Every project, ordered by id.
    func projects() async throws -> [Project]

    /// Replaces a project's settings; false when there is no such project.
    func updateSettings(_ settings: ProjectSettings, projectID: String) async throws -> Bool

    /// Deletes a project with its keys and messages; false when there is no such project.
    func deleteProject(id: String) async throws -> Bool

    /// Adds a key to an existing project. Throws `StoreError.notFound` or `.conflict`.
    func addServiceAccountKey(_ key: ServiceAccountKey) async throws

    /// The key with this id, revoked or not.
    func serviceAccountKey(id: String) async throws -> ServiceAccountKey?

    /// The keys of a project, ordered by creation.
    func serviceAccountKeys(projectID: String) async throws -> [ServiceAccountKey]

    /// Every key of every project.
    func allServiceAccountKeys() async throws -> [ServiceAccountKey]

    /// Marks a key revoked; false when there is no such active key.
    func revokeServiceAccountKey(id: String, at time: Timestamp) async throws -> Bool

    /// A number that changes whenever a project, its settings or its keys change, so a
    /// cache can tell cheaply whether to reload.
    func credentialsRevision() async throws -> Int64

    /// The secret with this name, created from `make` the first time it is asked for;
    /// every node sharing the store gets the same value.
    func secret(named name: String, orCreate make: @escaping @Sendable () -> [UInt8]) async throws -> [UInt8]

    /// Replaces the secret `name` with `value`, keeping the value it replaces as
    /// `<name>.previous` and the time as `<name>.rotated-at` (`SecretRotation`), and moves
    /// the credentials revision so that every node reloads.
    func rotateSecret(named name: String, to value: [UInt8], at time: Timestamp) async throws

    /// Stores accepted messages and the device-queue entries that deliver them, durably,
    /// all or none, and adds `stats` to the delivery counters in the same transaction.
    /// Each entry joins its app instance's queue as `QueuePolicy` decides with `limits`;
    /// the outcomes come back in entry order, and what they collapse or drop is counted.
    @discardableResult
    func appendMessages(
        _ messages: [StoredMessage], queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued]

    /// The stored message with this id.
    func message(id: String) async throws -> StoredMessage?

    /// How many messages a project has stored.
    func messageCount(projectID: String) async throws -> Int

    // MARK: Devices and registrations

    /// Records a checked-in device. Throws `StoreError.conflict` when the id is taken.
    func createDevice(_ device: Device) async throws

    /// The device with this android id.
    func device(androidID: UInt64) async throws -> Device?

    /// Records a new registration. Throws `StoreError.conflict` when the token is taken,
    /// `StoreError.notFound` when its project or device does not exist.
    func createRegistration(_ registration: Registration) async throws

    /// The registration holding this token.
    func registration(token: String) async throws -> Registration?

    /// The newest registration of a project's installation.
    func registration(installationID: String, projectID: String) async throws -> Registration?

    /// Every live registration a device's connection carries.
    func registrations(androidID: UInt64) async throws -> [Registration]

    /// Marks a registration deleted (SEMANTICS L6) and discards its queued messages,
    /// counting them as unregistered; answers the registration, nil when there is no live one.
    func deleteRegistration(token: String, at time: Timestamp) async throws -> Registration?

    /// The last connection of each of these devices (nil for one that never connected).
    func lastConnections(androidIDs: [UInt64]) async throws -> [UInt64: Timestamp?]

    /// Records that a device's connection logged in.
    func recordConnection(androidID: UInt64, at time: Timestamp) async throws

    /// Records a new Firebase installation; false, changing nothing, when the project has
    /// one with its id already (an installation is never replaced).
    func createInstallation(_ installation: Installation) async throws -> Bool

    /// A project's installation with this id.
    func installation(fid: String, projectID: String) async throws -> Installation?

    // MARK: Device queues

    /// Up to `limit` queued messages of a device after a sequence number, oldest first,
    /// leaving out those expired at `now`.
    func pendingMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp) async throws
        -> [QueuedMessage]

    /// Up to `limit` high-priority queued messages (and deletion signals) of a device after
    /// a sequence number, for a dozing device (SEMANTICS D4).
    func pendingHighPriorityMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        async throws -> [QueuedMessage]

    /// Removes acknowledged messages from a device's queue, counting them delivered;
    /// answers how many were removed.
    @discardableResult
    func acknowledge(androidID: UInt64, persistentIDs: [String]) async throws -> Int

    /// Acknowledges messages of many devices in one transaction (the gateway's group
    /// commit); answers how many entries were removed.
    @discardableResult
    func acknowledge(batch: [UInt64: [String]]) async throws -> Int

    /// Deletes up to `limit` queue entries whose time to live has passed, counting them
    /// expired (SEMANTICS D5), and up to `limit` message records past their time to live,
    /// so that the store does not grow without end; answers how many queue entries were deleted.
    func deleteExpired(now: Timestamp, limit: Int) async throws -> Int

    /// Removes up to `limit` devices that checked in before `checkedInBefore` and never
    /// registered an app nor connected; answers how many.
    func deleteAbandonedDevices(checkedInBefore: Timestamp, limit: Int) async throws -> Int

    // MARK: Topics

    /// Subscribes a token to a topic; false when it was subscribed already. Throws
    /// `StoreError.limit` when the token has `limit` subscriptions already.
    func subscribe(_ subscription: TopicSubscription, limit: Int) async throws -> Bool

    /// Unsubscribes a token; false when it was not subscribed.
    func unsubscribe(token: String, topic: String) async throws -> Bool

    /// A token's subscriptions, by topic name.
    func subscriptions(token: String) async throws -> [TopicSubscription]

    /// The topics each of `tokens` is subscribed to, read at once (a condition fanout
    /// checks a page of hundreds); tokens with no subscription are left out.
    func topics(ofTokens tokens: [String]) async throws -> [String: Set<String>]

    /// Live app registrations of a project after `cursor` (a `FanoutPosition`), in its
    /// order, at most `limit`: those subscribed to any of `topics`, or every one when
    /// `topics` is nil.
    func audience(projectID: String, topics: [String]?, after cursor: String, limit: Int) async throws
        -> [Registration]

    /// Live app registrations of a project on the devices `androidIDs`, ordered by token:
    /// those subscribed to any of `topics`, or every one when `topics` is nil.
    func audience(projectID: String, topics: [String]?, androidIDs: [UInt64]) async throws -> [Registration]

    // MARK: Fanouts

    /// Stores an accepted fanout message and its job, all or none.
    func createFanout(_ message: StoredMessage, job: FanoutJob, stats: [DeliveryStat]) async throws

    /// Jobs not yet done, oldest first.
    func unfinishedFanouts() async throws -> [FanoutJob]

    /// Queues one page of a fanout and moves its cursors (`firstDone` and `cursor`, see
    /// `FanoutJob`) in one transaction, so a restart resumes after the last page stored
    /// and no device gets a page twice.
    @discardableResult
    func storeFanoutPage(
        messageID: String, queue: [QueuedMessage], firstDone: Int, cursor: String, reached: Int, done: Bool,
        limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued]

    /// Marks a queued job running with the devices it reaches first; a job already
    /// running keeps the ones it has. Answers the job's first devices.
    func startFanout(messageID: String, firstDevices: [UInt64]) async throws -> [UInt64]

    // MARK: Device groups

    /// Creates a device group. Throws `StoreError.conflict` when the name is taken in the project.
    func createDeviceGroup(_ group: DeviceGroup) async throws

    /// A project's device group by name or by notification key.
    func deviceGroup(projectID: String, name: String?, notificationKey: String?) async throws -> DeviceGroup?

    /// Replaces a group's members; an empty list deletes the group.
    func updateDeviceGroup(projectID: String, notificationKey: String, members: [String]) async throws

    // MARK: Delivery reports

    /// Adds to delivery counters.
    func record(_ stats: [DeliveryStat]) async throws

    /// Counts a device's receipt (`stat`, an impression or an open) of a stored message,
    /// unless that device's receipt of that kind was counted before; answers whether it
    /// counted. Receipts go with their message.
    func recordReceipt(_ stat: DeliveryStat, messageID: String, androidID: UInt64) async throws -> Bool

    /// A project's counters for days in `from...through`, with the messages of each key
    /// still queued; `appID` nil for every app.
    func deliveryReport(projectID: String, appID: String?, from: CalendarDay, through: CalendarDay) async throws
        -> [DeliveryReportRow]

    /// How many messages wait in a device's queue, expired ones included.
    func queuedCount(androidID: UInt64) async throws -> Int
}

extension HeraldStore {
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
}

/// How one entry joined its queue: the policy's decision and the rows stored for it, with
/// their sequence numbers (the message, then any "messages deleted" signal).
public struct Enqueued: Sendable {
    public var decision: QueuePolicy.Decision
    public var stored: [QueuedMessage]

    public init(decision: QueuePolicy.Decision, stored: [QueuedMessage]) {
        self.decision = decision
        self.stored = stored
    }
}

/// An accepted message as the store keeps it.
public struct StoredMessage: Sendable, Hashable {
    /// The message id (the last part of its name).
    public var id: String
    /// The project that sent it.
    public var projectID: String
    /// What it was sent to: `token`, `topic`, `condition` or `fid`.
    public var targetKind: String
    /// The token, topic name, condition text or installation id.
    public var target: String
    /// The canonical message JSON.
    public var body: String
    /// When it was accepted.
    public var createdAt: Timestamp
    /// When its time to live runs out.
    public var expiresAt: Timestamp

    public init(
        id: String, projectID: String, targetKind: String, target: String, body: String, createdAt: Timestamp,
        expiresAt: Timestamp
    ) {
        self.id = id
        self.projectID = projectID
        self.targetKind = targetKind
        self.target = target
        self.body = body
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
