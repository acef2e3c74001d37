import Synchronization

/// What `GET /healthz` tells a balancer: `ok`, or `draining` (503) once the node began to
/// stop, so that the balancer sends new requests and devices to other nodes before this
/// one stops accepting them.
public final class NodeHealth: Sendable {
    private let draining = Atomic<Bool>(false)

    public init() {}

    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// The node is stopping: from now on the health check fails.
    public func drain() {
        draining.store(true, ordering: .relaxed)
    }
}
