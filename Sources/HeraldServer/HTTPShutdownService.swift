import HeraldHTTP
import NIOCore
import ServiceLifecycle

/// At a graceful stop, once the drain is over: every HTTP request still open is closed
/// after `grace` (`HTTPShutdown`), so a body that stalled or answers nobody reads do not
/// hold the node's stop (the listeners wait for their requests).
struct HTTPShutdownService: Service {
    let shutdown: HTTPShutdown
    /// How long requests under way may still take. Default 3 s: a send is answered in
    /// milliseconds, and a stop should end well inside a container's 10 s.
    var grace: TimeAmount = .seconds(3)

    func run() async throws {
        try? await gracefulShutdown()
        shutdown.begin(grace: grace)
    }
}
