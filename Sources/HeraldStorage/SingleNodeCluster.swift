public import HeraldCore

/// The cluster of a node whose store nobody else uses (the embedded SQLite store, or the
/// in-memory one of tests): every device is held here or nowhere.
public struct SingleNodeCluster: Cluster {
    public let nodeID: String
    public var isShared: Bool { false }

    public init(nodeID: String = "local") {
        self.nodeID = nodeID
    }

    public func heartbeat(now: Timestamp, deadAfterMilliseconds: Int64) async throws -> NodeHeartbeat {
        NodeHeartbeat(staleNodes: [], wasForgotten: false)
    }

    public func node(_ id: String) async throws -> NodeRecord? { nil }

    public func leave() async throws {}

    public func releaseNode(_ node: String) async throws -> Int { 0 }

    public func claimConnections(androidIDs: [UInt64]) async throws -> Int { 0 }

    public func releaseConnection(androidID: UInt64) async throws {}

    public func remoteHolders(androidIDs: [UInt64]) async throws -> [UInt64: String] { [:] }

    public func devicesHeldElsewhere() async throws -> [UInt64] { [] }

    public func signal(node: String, androidIDs: [UInt64]) async throws {}

    /// Nothing ever signals a single node: waits until cancelled.
    public func listenForSignals(
        listening: @escaping @Sendable () async -> Void, _ receive: @escaping @Sendable ([UInt64]) async -> Void
    ) async throws {
        await listening()
        try await Task.sleep(for: .seconds(Int64.max / 2))
    }

    public func recentMessages(to targets: [String], minuteSince: Timestamp, hourSince: Timestamp) async throws
        -> RecentMessages
    {
        RecentMessages(minute: 0, hour: 0, oldestInMinute: nil, oldestInHour: nil)
    }

    public func exchangeQuotaCounts(quota: String, mine: [QuotaCount], since: Timestamp) async throws -> [QuotaCount] {
        mine
    }
}
