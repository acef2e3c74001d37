import HeraldDelivery
import ServiceLifecycle

/// Runs the fanout engine until graceful shutdown; unfinished fanouts resume on the next start.
struct FanoutService: Service {
    let engine: FanoutEngine

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await engine.run() }
        } catch is CancellationError {}
    }
}
