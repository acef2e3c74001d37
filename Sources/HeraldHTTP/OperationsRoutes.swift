import HeraldCore
import Hummingbird

/// `GET /healthz` and `GET /metrics`.
struct OperationsRoutes {
    /// Renders the Prometheus text exposition.
    let renderMetrics: @Sendable () -> String
    /// Who may read it.
    let access: MetricsAccess
    let health: NodeHealth

    func register(on router: Router<HeraldRequestContext>) {
        let health = health
        router.get("/healthz") { _, _ in
            health.isDraining
                ? Response.json(.stringObject([("status", "draining")]), status: .serviceUnavailable)
                : Response.json(.stringObject([("status", "ok")]))
        }
        let render = renderMetrics
        let access = access
        router.get("/metrics") { request, _ in
            guard access.allows(authorization: request.headers[.authorization]) else {
                return Response.json(
                    .stringObject([
                        (
                            "error",
                            access == .closed
                                ? "Metrics need a bearer token (--metrics-token); --metrics-without-token serves them to anyone who reaches a loopback listener."
                                : "A valid metrics bearer token is required."
                        )
                    ]), status: .unauthorized)
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: render())))
        }
    }
}
