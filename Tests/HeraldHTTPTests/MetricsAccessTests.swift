import HeraldHTTP
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldServer

/// Who may read `GET /metrics`, which names every project with its counts.
@Suite struct MetricsAccessTests {
    /// A proxy on the same host connects from loopback for everyone behind it: a loopback
    /// listener is no proof of who reads, so without a token metrics are closed unless the
    /// operator opens loopback listeners deliberately.
    @Test func metricsNeedATokenUnlessLoopbackIsOpenedDeliberately() {
        #expect(ServerConfiguration().metricsWithoutToken == false)
        #expect(MetricsAccess.forListening(on: "127.0.0.1", token: nil) == .closed)
        #expect(MetricsAccess.forListening(on: "::1", token: nil) == .closed)
        #expect(MetricsAccess.forListening(on: "127.0.0.1", token: nil, openOnLoopback: true) == .open)
        #expect(MetricsAccess.forListening(on: "::1", token: nil, openOnLoopback: true) == .open)
        #expect(MetricsAccess.forListening(on: "0.0.0.0", token: nil, openOnLoopback: true) == .closed)
        #expect(MetricsAccess.forListening(on: "10.1.2.3", token: "") == .closed)
        #expect(MetricsAccess.forListening(on: "0.0.0.0", token: "s3cret") == .bearer("s3cret"))
        #expect(MetricsAccess.forListening(on: "127.0.0.1", token: "s3cret", openOnLoopback: true) == .bearer("s3cret"))
    }

    @Test func aTokenIsRequiredExactly() {
        let access = MetricsAccess.bearer("s3cret")
        #expect(access.allows(authorization: "Bearer s3cret"))
        for wrong in [nil, "", "Bearer s3cre", "Bearer s3cret ", "bearer s3cretx", "s3cret"] {
            #expect(!access.allows(authorization: wrong))
        }
        #expect(!MetricsAccess.closed.allows(authorization: "Bearer s3cret"))
        #expect(MetricsAccess.open.allows(authorization: nil))
    }
}

/// A listener's metrics are open or closed by the address that listener is bound to: the
/// drop-in listener on a public address keeps them closed while the HTTP port is loopback.
@Suite struct MetricsPerListenerTests {
    @Test func aListenerBeyondLoopbackClosesItsMetricsWhateverTheHTTPPortIs() async throws {
        let server = try await TestServer.make()
        #expect(server.node.configuration.httpHost == "127.0.0.1")
        let publicListener = Application(router: server.node.router(listenerHost: "0.0.0.0"))
        try await publicListener.test(.router) { client in
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .unauthorized)
        }
        let loopbackListener = Application(router: server.node.router(listenerHost: "127.0.0.1"))
        try await loopbackListener.test(.router) { client in
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
        }
    }
}
