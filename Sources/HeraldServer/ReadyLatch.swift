/// Calls back once both the HTTP server and the gateway listen.
actor ReadyLatch {
    private let callback: @Sendable (Int, [Int]) async -> Void
    private var httpPort: Int?
    private var gatewayPorts: [Int]?

    init(_ callback: @escaping @Sendable (Int, [Int]) async -> Void) {
        self.callback = callback
    }

    func http(_ port: Int) async {
        httpPort = port
        await fireIfReady()
    }

    func gateway(_ ports: [Int]) async {
        gatewayPorts = ports
        await fireIfReady()
    }

    private func fireIfReady() async {
        guard let httpPort, let gatewayPorts else { return }
        self.gatewayPorts = nil
        await callback(httpPort, gatewayPorts)
    }
}
