import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldWebhooks

/// SEMANTICS E5: a webhook's request connects to the address its target was checked at;
/// its host's name is not resolved again.
@Suite struct WebhookClientsTests {
    @Test func E5_aRequestGoesToTheCheckedAddressWithoutResolvingTheNameAgain() async throws {
        let router = Router()
        router.post("/hook") { request, _ in request.head.authority ?? "" }
        let clients = WebhookClients()
        try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            .test(.live) { client in
                let port = try #require(client.port)
                // `.invalid` never resolves (RFC 6761): only the checked address can be reached.
                let target = WebhookTargetPolicy.Target(
                    url: URL(string: "http://hooks.invalid:\(port)/hook")!, host: "hooks.invalid", address: "127.0.0.1")
                let (http, retired) = clients.client(for: target)
                #expect(retired.isEmpty)
                var request = HTTPClientRequest(url: target.url.absoluteString)
                request.method = .POST
                let response = try await http.execute(request, timeout: .seconds(5))
                #expect(response.status == .ok)
                // The Host header still names the target.
                #expect(String(buffer: try await response.body.collect(upTo: 1024)) == "hooks.invalid:\(port)")
                // Checked again at another address: a new client, and the old one to shut down.
                var moved = target
                moved.address = "127.0.0.2"
                let (other, replaced) = clients.client(for: moved)
                #expect(other !== http && replaced.count == 1)
                for old in replaced { try await old.shutdown() }
            }
        await clients.shutdown()
    }
}
