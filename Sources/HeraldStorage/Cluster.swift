public import HeraldCore

/// The nodes that share one store: which node holds which device's connection, signals
/// between nodes, node liveness, and the counts behind project quotas that hold across
/// nodes. A node is given its cluster; the embedded store's is `SingleNodeCluster`.
///
/// The instance belongs to one node (`nodeID`); changes it makes on that node's behalf (a
/// connection recorded, a fanout created) are claimed for that node.
public protocol Cluster: Sendable {
    /// The node this instance works for.
    var nodeID: String { get }

    /// Whether other nodes may share the store. When false every answer below is "nobody
    /// else": no other holders, no signals, and quotas counted by this node alone.
    var isShared: Bool { get }

    /// Records that this node is alive at `now`; answers the nodes whose last sign of life
    /// is older than `deadAfterMilliseconds`, and whether this node had been forgotten.
    func heartbeat(now: Timestamp, deadAfterMilliseconds: Int64) async throws -> NodeHeartbeat

    /// A node's last sign of life and where it runs, if it has a record.
    func node(_ id: String) async throws -> NodeRecord?

    /// Marks this node as stopped (a graceful shutdown), so that the other nodes release
    /// its claims at once and a restart under its id need not wait for its heartbeat to age.
    func leave() async throws

    /// Forgets a node: its device connections are no longer claimed, its unfinished fanouts
    /// are taken over by this node, and its quota counts are removed. Answers how many
    /// fanouts were taken over.
    func releaseNode(_ node: String) async throws -> Int

    /// Claims again, for this node, the connections of these devices that no node claims
    /// (this node was taken for dead while it still held them); answers how many it claimed.
    func claimConnections(androidIDs: [UInt64]) async throws -> Int

    /// Forgets this node's claim on a device's connection (it disconnected), unless another
    /// node has claimed the device since.
    func releaseConnection(androidID: UInt64) async throws

    /// The node holding each of these devices' connections, for those held by another node.
    func remoteHolders(androidIDs: [UInt64]) async throws -> [UInt64: String]

    /// The devices whose connections other nodes hold, ascending.
    func devicesHeldElsewhere() async throws -> [UInt64]

    /// Tells `node` that messages were stored for these devices.
    func signal(node: String, androidIDs: [UInt64]) async throws

    /// Runs until cancelled, handing `receive` the devices of every signal sent to this node;
    /// calls `listening` once signals are heard (those sent before were not).
    func listenForSignals(
        listening: @escaping @Sendable () async -> Void, _ receive: @escaping @Sendable ([UInt64]) async -> Void
    ) async throws

    /// How many stored messages went to any of `targets` (a token and its installation id)
    /// since `hourSince`, and since `minuteSince`: the per-app-instance limit (SEMANTICS T6)
    /// counted over every node.
    func recentMessages(to targets: [String], minuteSince: Timestamp, hourSince: Timestamp) async throws
        -> RecentMessages

    /// Stores this node's counts of a quota (per project, per bucket start) and answers the
    /// other nodes' counts since `since`, summed per project and bucket start.
    func exchangeQuotaCounts(quota: String, mine: [QuotaCount], since: Timestamp) async throws -> [QuotaCount]
}

/// One node as the store knows it: its id, where it runs, and its last heartbeat.
public struct NodeRecord: Sendable, Hashable {
    public var id: String
    public var address: String
    public var heartbeatAt: Timestamp

    public init(id: String, address: String, heartbeatAt: Timestamp) {
        self.id = id
        self.address = address
        self.heartbeatAt = heartbeatAt
    }
}

/// A node's count for one project's quota in one time bucket.
public struct QuotaCount: Sendable, Hashable {
    public var projectID: String
    /// The bucket's start, in milliseconds since the epoch.
    public var bucket: Int64
    public var count: Int

    public init(projectID: String, bucket: Int64, count: Int) {
        self.projectID = projectID
        self.bucket = bucket
        self.count = count
    }
}

/// Messages stored for one app instance in the last minute and hour, with the oldest of each.
public struct RecentMessages: Sendable, Hashable {
    public var minute: Int
    public var hour: Int
    public var oldestInMinute: Timestamp?
    public var oldestInHour: Timestamp?

    /// The starts of the minute and the hour before `now`, which the counts cover.
    public static func windows(before now: Timestamp) -> (minute: Timestamp, hour: Timestamp) {
        (now.adding(milliseconds: -60_000), now.adding(milliseconds: -3_600_000))
    }

    public init(minute: Int, hour: Int, oldestInMinute: Timestamp?, oldestInHour: Timestamp?) {
        self.minute = minute
        self.hour = hour
        self.oldestInMinute = oldestInMinute
        self.oldestInHour = oldestInHour
    }
}
