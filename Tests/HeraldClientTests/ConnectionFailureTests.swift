import HeraldClient
import HeraldCore
import HeraldTestSupport
import Testing

/// A device that cannot reach its gateway tells its app why, each time it tries again.
@Suite struct ConnectionFailureTests {
    @Test func aClosedGatewayPortIsToldWithItsReasonAtEachAttempt() async throws {
        try await GatewayHarness.with { harness in
            var configuration = harness.clientConfiguration()
            configuration.gatewayPort = try await GatewayHarness.freePort()
            let client = HeraldClient(configuration: configuration)
            _ = try await client.register()
            let running = Task { try await client.run() }
            defer { running.cancel() }
            var failures: [ConnectionFailure] = []
            for await event in client.events {
                guard case .disconnected(let failure) = event else { continue }
                failures.append(failure)
                if failures.count == 2 { break }
            }
            for failure in failures {
                #expect(!failure.loggedIn)
                #expect(failure.gateway == "127.0.0.1:\(configuration.gatewayPort)")
                #expect(failure.reason == "Connection refused", "\(failure.reason)")
                #expect(failure.description.hasPrefix("cannot connect to 127.0.0.1:"))
            }
        }
    }

    /// A gateway whose certificate the device does not trust: the TLS failure is the reason,
    /// not a close by the server.
    @Test func aTLSFailureIsToldAsTheReason() async throws {
        try await GatewayHarness.with { harness in
            var configuration = harness.clientConfiguration()
            configuration.trust = .system
            let client = HeraldClient(configuration: configuration)
            _ = try await client.register()
            let running = Task { try await client.run() }
            defer { running.cancel() }
            for await event in client.events {
                guard case .disconnected(let failure) = event else { continue }
                #expect(!failure.loggedIn)
                #expect(failure.reason.hasPrefix("TLS: "), "\(failure.reason)")
                break
            }
        }
    }
}
