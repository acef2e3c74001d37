/// What a node learns from writing its heartbeat.
public struct NodeHeartbeat: Sendable, Hashable {
    /// The other nodes whose last heartbeat is older than the dead-after window, by id.
    public var staleNodes: [String]
    /// Whether this node had no record until now: it had never beaten, or another node took
    /// it for dead and released its device connections (their messages wake nobody here
    /// until it claims them again).
    public var wasForgotten: Bool

    public init(staleNodes: [String], wasForgotten: Bool) {
        self.staleNodes = staleNodes
        self.wasForgotten = wasForgotten
    }
}
