import Foundation
import HeraldClient
import HeraldCore
import HeraldTestSupport
import Testing

/// The device SDK registers over HTTPS (AsyncHTTPClient), checking the server's certificate
/// against the CA it is given, and then receives over the gateway: against a node's drop-in
/// listener, which serves every path under the operator's own host name.
@Suite struct HTTPSRegistrationTests {
    @Test func anAppInstanceRegistersOverHTTPSAndReceives() async throws {
        let port = try await GatewayHarness.freePort()
        try await GatewayHarness.with(dropInPort: port) { harness in
            let server = "https://localhost:\(port)"
            try await GatewayHarness.eventually {
                (try? await WebRequest.send(.GET, server + "/healthz", certificateAuthority: harness.dropInCAPath))?
                    .status == 200
            }
            // Checked against the system's roots, the drop-in certificate is refused (the
            // connection is tried again until the request's time is up).
            let untrusting = try DeviceRegistrar(server: server, timeout: .seconds(1))
            await #expect(throws: (any Error).self) { try await untrusting.checkin(existing: nil) }
            // One file trusting both the drop-in CA (HTTPS) and the gateway's (MCS).
            let bundle = harness.directory + "/both-cas.pem"
            let pems = try [harness.dropInCAPath, harness.caPath].map {
                try String(contentsOfFile: $0, encoding: .utf8)
            }
            try pems.joined(separator: "\n").write(toFile: bundle, atomically: true, encoding: .utf8)
            var configuration = harness.clientConfiguration()
            configuration.server = server
            configuration.trust = .certificateAuthority(path: bundle)
            let client = HeraldClient(configuration: configuration)
            let token = try await client.register()
            #expect(try await harness.node.store.registration(token: token)?.projectID == harness.project.id)
            let running = Task { try await client.run() }
            defer { running.cancel() }
            try await GatewayHarness.eventually { await client.isConnected }
            _ = try await harness.send(#"{"token":"\#(token)","data":{"over":"https"}}"#)
            guard case .message(let message) = try await firstEvent(client) else {
                Issue.record("no message")
                return
            }
            #expect(message.data["over"] == "https")
        }
    }
}
