public import Foundation
import NIOCore
import NIOPosix

/// Where webhooks may post (SEMANTICS E5): HTTPS to hosts whose every address is public,
/// unless the operator allows a host or a range (`--allow-webhook-host`; a host is then
/// allowed plain HTTP too); never to one of Herald's own listeners or this host's own
/// addresses. The check answers the address it checked, and the request goes there: the
/// name is not resolved a second time, so it cannot resolve elsewhere in between.
public struct WebhookTargetPolicy: Sendable {
    /// Hosts the operator allows whatever their scheme and address.
    public var allowedHosts: Set<String>
    /// Address ranges the operator opens (`10.1.0.0/16`), given with the hosts.
    let allowedRanges: [WebhookAddressRange]
    /// Herald's own listeners: host names and addresses it answers on, and its ports.
    public var ownHosts: Set<String>
    public var ownPorts: Set<Int>

    /// `allowed` holds host names and address ranges alike, as `--allow-webhook-host` takes them.
    public init(allowedHosts allowed: Set<String> = [], ownHosts: Set<String> = [], ownPorts: Set<Int> = []) {
        allowedRanges = allowed.compactMap(WebhookAddressRange.init)
        allowedHosts = Set(allowed.filter { WebhookAddressRange($0) == nil }.map { $0.lowercased() })
        self.ownHosts = ownHosts
        self.ownPorts = ownPorts
    }

    /// Why a target is refused.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
        /// The host has no address now: the one refusal a later look-up may lift.
        public var unresolved = false
    }

    /// A checked target: the URL to post to, and the address its host had when checked,
    /// which the request connects to.
    public struct Target: Sendable, Equatable {
        public var url: URL
        public var host: String
        public var address: String
    }

    /// Checks `text` and every address its host has now; answers where to post.
    public func check(_ text: String) throws(Refusal) -> Target {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
            scheme == "https" || scheme == "http"
        else { throw Refusal(description: "not an http(s) URL: \(text)") }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let addresses = WebhookAddress.resolve(host)
        // An allowed address allows a name that resolves to it (`localhost` for an allowed
        // 127.0.0.1), and the request goes to that address.
        let allowedAddress =
            allowedHosts.contains(host) ? addresses.first : addresses.first { allowedHosts.contains($0.text) }
        let allowed = allowedHosts.contains(host) || allowedAddress != nil
        guard allowed || scheme == "https" else {
            throw Refusal(
                description: "only https targets are allowed: \(text); allow the host with --allow-webhook-host")
        }
        guard let first = allowedAddress ?? addresses.first else {
            throw Refusal(description: "\(host) has no address", unresolved: true)
        }
        let own = Set(ownHosts.map { $0.lowercased() }.compactMap(WebhookAddress.init))
        if ownPorts.contains(port),
            ownHosts.contains(where: { $0.lowercased() == host })
                || addresses.contains(where: { own.contains($0) || $0.refusal == "loopback" })
        {
            throw Refusal(description: "\(host):\(port) is one of Herald's own addresses")
        }
        let target = Target(url: url, host: host, address: first.text)
        if allowed { return target }
        let local = Self.hostAddresses()
        for address in addresses where !allowedRanges.contains(where: { $0.contains(address) }) {
            let reason = local.contains(address) ? "this host's own address" : address.refusal
            if let reason {
                throw Refusal(
                    description:
                        "\(host) resolves to \(address.text), \(reason); allow it with --allow-webhook-host")
            }
        }
        return target
    }

    /// The addresses of this host's interfaces.
    static func hostAddresses() -> Set<WebhookAddress> {
        Set(((try? System.enumerateDevices()) ?? []).compactMap { $0.address.flatMap(WebhookAddress.init) })
    }
}
