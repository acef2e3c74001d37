import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore

/// The HTTP clients webhooks post with, one per target host, each connecting only to the
/// address the target policy checked for that host (`dnsOverride`): the host's name is
/// not resolved again when a connection is made. A host whose address changed gets a new
/// client; the old one is shut down.
final class WebhookClients: Sendable {
    /// Hosts whose clients are kept; past it the oldest is shut down.
    static let maximumHosts = 64
    private let clients = NIOLockedValueBox<[(host: String, address: String, client: HTTPClient)]>([])

    /// The client for a checked target, and a client to shut down (replaced or evicted).
    func client(for target: WebhookTargetPolicy.Target) -> (HTTPClient, retired: [HTTPClient]) {
        clients.withLockedValue { clients in
            if let kept = clients.first(where: { $0.host == target.host && $0.address == target.address }) {
                return (kept.client, [])
            }
            var retired = clients.filter { $0.host == target.host }.map(\.client)
            clients.removeAll { $0.host == target.host }
            if clients.count >= Self.maximumHosts { retired.append(clients.removeFirst().client) }
            // Redirects are not followed: a target is checked against the policy, not where it points.
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(10)))
            configuration.dnsOverride = [target.host: target.address]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients.append((target.host, target.address, client))
            return (client, retired)
        }
    }

    /// Shuts every client down.
    func shutdown() async {
        let all = clients.withLockedValue { clients in
            defer { clients = [] }
            return clients.map(\.client)
        }
        for client in all { try? await client.shutdown() }
    }
}
