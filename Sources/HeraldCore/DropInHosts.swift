/// Which of Herald's HTTP paths each of FCM's host names serves in drop-in mode, where the
/// fleet's resolver maps those names to Herald: a request is answered only under the host
/// its client would have sent it to (the v1 API under `fcm.googleapis.com`, check-ins under
/// `android.clients.google.com`, and so on), and the operator's own host names serve
/// everything. Any other host, or a path its host does not serve, is not found.
public struct DropInHosts: Sendable, Equatable {
    /// FCM's host names and the path prefixes each serves; the device and XMPP hosts serve
    /// no HTTP path (their connections are MCS and XMPP).
    public static let google: [(host: String, paths: [String])] = [
        ("oauth2.googleapis.com", ["/token"]),
        ("fcm.googleapis.com", ["/v1/projects/", "/fcm/send", "/fcm/notification", "/fcm/connect/subscribe", "/wp/"]),
        ("iid.googleapis.com", ["/iid/"]),
        ("fcmregistrations.googleapis.com", ["/v1/projects/"]),
        ("firebaseinstallations.googleapis.com", ["/v1/projects/"]),
        ("android.clients.google.com", ["/checkin", "/c2dm/register3"]),
        ("device-provisioning.googleapis.com", ["/checkin"]),
        ("fcmtoken.googleapis.com", ["/register"]),
        ("fcmdata.googleapis.com", ["/v1beta1/projects/"]),
        ("jmt17.google.com", ["/fcm/send/", "/wp/"]),
        ("gcm-http.googleapis.com", ["/gcm/send", "/fcm/send"]),
        ("android.googleapis.com", ["/gcm/send"]),
        (deviceGatewayHost, []),
        ("fcm-xmpp.googleapis.com", []),
    ]

    /// Mozilla's push service's host names, served when Mozilla's push protocol is
    /// (`--mozilla-push-project`): the WebSocket host Firefox connects to, and the host its
    /// endpoints are issued on.
    public static let mozilla: [(host: String, paths: [String])] = [
        (mozillaPushHost, []),
        (mozillaEndpointHost, ["/wp/"]),
    ]

    /// The host Firefox's push connection asks for (`dom.push.serverURL`); on port 443 its TLS
    /// server name tells it from HTTPS.
    public static let mozillaPushHost = "push.services.mozilla.com"
    /// The host of the endpoints a channel made over Mozilla's protocol is given in drop-in mode.
    public static let mozillaEndpointHost = "updates.push.services.mozilla.com"

    /// Whether a TLS server name asks for Mozilla's push protocol.
    public static func isMozillaPush(_ serverName: String) -> Bool { host(of: serverName) == mozillaPushHost }

    /// Mozilla's host names.
    public static var mozillaHostNames: [String] { mozilla.map(\.host) }

    /// The devices' MCS host; on port 443 its TLS server name tells a device's connection from
    /// an HTTPS one.
    public static let deviceGatewayHost = "mtalk.google.com"

    /// Whether a TLS server name asks for the device gateway.
    public static func isDeviceGateway(_ serverName: String) -> Bool { host(of: serverName) == deviceGatewayHost }

    /// FCM's host names.
    public static var googleHostNames: [String] { google.map(\.host) }

    /// The operator's own host names, lower-cased: every path is served under them.
    public var ownHostNames: Set<String>

    public init(ownHostNames: [String] = []) {
        self.ownHostNames = Set(ownHostNames.map { $0.lowercased() })
    }

    /// Whether a request for `path` under `authority` (a Host header or HTTP/2
    /// `:authority`, with or without a port) is served.
    public func serves(authority: String, path: String) -> Bool {
        let host = Self.host(of: authority)
        if ownHostNames.contains(host) { return true }
        guard let entry = (Self.google + Self.mozilla).first(where: { $0.host == host }) else { return false }
        let pathOnly = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return entry.paths.contains { pathOnly.hasPrefix($0) }
    }

    /// The host of an authority, lower-cased, without its port.
    static func host(of authority: String) -> String {
        var host = Substring(authority.lowercased())
        if host.hasPrefix("[") {
            host = host.dropFirst().prefix { $0 != "]" }
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        return String(host)
    }

    public static func == (lhs: DropInHosts, rhs: DropInHosts) -> Bool { lhs.ownHostNames == rhs.ownHostNames }
}
