import HeraldHTTP
import Logging
import ServiceLifecycle

/// The first step of a graceful stop: the health check fails (`NodeHealth`) and the node
/// keeps serving for `seconds`, long enough for a balancer to notice and send new
/// requests and reconnecting devices elsewhere; then the other services stop in order.
struct DrainService: Service {
    let health: NodeHealth
    let seconds: Double
    let logger: Logger

    func run() async throws {
        // Returns when the stop begins (or the task is cancelled).
        try? await gracefulShutdown()
        health.drain()
        guard seconds > 0, !Task.isCancelled else { return }
        logger.info("draining: the health check fails; stopping in \(seconds) s")
        try? await Task.sleep(for: .seconds(seconds))
    }
}
