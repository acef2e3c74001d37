public import Foundation
import NIOCore

/// Where webhooks may post (SEMANTICS E5): HTTPS to hosts outside loopback, unless the
/// operator allows a host (`--allow-webhook-host`, which also allows plain HTTP to it); never
/// to one of Herald's own listeners.
public struct WebhookTargetPolicy: Sendable {
    /// Hosts the operator allows whatever their scheme and address.
    public var allowedHosts: Set<String>
    /// Herald's own listeners: host names and addresses it answers on, and its ports.
    public var ownHosts: Set<String>
    public var ownPorts: Set<Int>

    public init(allowedHosts: Set<String> = [], ownHosts: Set<String> = [], ownPorts: Set<Int> = []) {
        self.allowedHosts = allowedHosts
        self.ownHosts = ownHosts
        self.ownPorts = ownPorts
    }

    /// Why a target is refused.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// Checks `url` and the addresses its host has now; answers the URL to post to.
    public func check(_ text: String) throws(Refusal) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
            scheme == "https" || scheme == "http"
        else { throw Refusal(description: "not an http(s) URL: \(text)") }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let addresses = Self.addresses(of: host, port: port)
        let own = ownHosts.map { $0.lowercased() }
        if ownPorts.contains(port),
            own.contains(host) || addresses.contains(where: { own.contains($0) || Self.isLoopback($0) })
        {
            throw Refusal(description: "\(host):\(port) is one of Herald's own addresses")
        }
        if allowedHosts.contains(host) { return url }
        guard scheme == "https" else { throw Refusal(description: "only https targets are allowed: \(text)") }
        if host == "localhost" || addresses.isEmpty || addresses.contains(where: Self.isLoopback) {
            throw Refusal(description: "\(host) is on loopback or has no address; allow it with --allow-webhook-host")
        }
        return url
    }

    /// The addresses `host` resolves to now, as text; empty when it does not.
    static func addresses(of host: String, port: Int) -> [String] {
        guard let address = try? SocketAddress.makeAddressResolvingHost(host, port: port) else { return [] }
        return address.ipAddress.map { [$0] } ?? []
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address == "0.0.0.0" || address == "::"
            || address.hasPrefix("::ffff:127.")
    }
}
