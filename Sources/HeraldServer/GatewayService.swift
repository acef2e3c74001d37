import HeraldGateway
import ServiceLifecycle

/// Runs the device gateway until graceful shutdown.
struct GatewayService: Service {
    let gateway: DeviceGateway
    let onListening: @Sendable ([Int]) async -> Void

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await gateway.run(onListening: onListening)
        } onGracefulShutdown: {
            gateway.stop()
        }
    }
}
