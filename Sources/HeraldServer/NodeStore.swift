public import HeraldStorage
public import ServiceLifecycle

/// The store a node runs on, the cluster of nodes that share it, and the background work
/// the store needs while the node runs (the embedded store's log checkpoints).
public struct NodeStore: Sendable {
    public var store: any HeraldStore
    public var cluster: any Cluster
    public var maintenance: [any Service]

    public init(store: any HeraldStore, cluster: any Cluster, maintenance: [any Service]) {
        self.store = store
        self.cluster = cluster
        self.maintenance = maintenance
    }
}
