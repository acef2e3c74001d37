import HeraldCore
import Hummingbird

/// `GET /healthz` and `GET /metrics`.
struct OperationsRoutes {
    let environment: HTTPEnvironment

    func register(on router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, _ in
            Response.json(.stringObject([("status", "ok")]))
        }
        let render = environment.renderMetrics
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: render())))
        }
    }
}
