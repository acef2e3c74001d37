import HeraldXMPP
import ServiceLifecycle

/// Runs the XMPP connection server until graceful shutdown, which drains its connections.
struct XMPPService: Service {
    let gateway: XMPPGateway

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await gateway.run()
        } onGracefulShutdown: {
            gateway.stop()
        }
    }
}
