import HeraldHTTP
import ServiceLifecycle

/// Runs a service's tasks in a lane of `RequestLanes`: the HTTP server's in the first
/// lane, so that an overloaded project's accepted sends, moved to the later lane, wait
/// behind other projects' requests. Only the HTTP server runs there: a task with a
/// preferred executor hops to and from every actor through that executor's queue, where
/// the other services' tasks would switch on the thread they run on.
struct LaneService<Inner: Service>: Service {
    let inner: Inner
    let lane: LaneExecutor

    init(_ inner: Inner, lane: LaneExecutor) {
        self.inner = inner
        self.lane = lane
    }

    func run() async throws {
        try await withTaskExecutorPreference(lane) { try await inner.run() }
    }
}
