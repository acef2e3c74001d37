/// The browsers' own push services a web registration's endpoint may name (SEMANTICS W1):
/// Google's, Mozilla's, Apple's and Microsoft's, and those the operator adds
/// (`--web-push-service HOST`, where `*.example.com` names every host under it).
public struct WebPushServices: Sendable, Equatable {
    /// The push services of the browsers Herald knows.
    public static let known: [String] = [
        "fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com", "*.notify.windows.com",
    ]

    /// Host patterns, lowercased: a host, or `*.` and the domain every host under it belongs to.
    public private(set) var patterns: [String]

    public init(adding extra: [String] = []) {
        patterns = Self.known + extra.map { $0.lowercased() }
    }

    /// Whether `host` is one of the services.
    public func contains(host: String) -> Bool {
        let host = host.lowercased()
        return patterns.contains { pattern in
            pattern.hasPrefix("*.") ? host.hasSuffix(pattern.dropFirst()) : host == pattern
        }
    }

    /// The endpoint's host when `endpoint` is an `https` URL of one of the services, else nil.
    public func host(of endpoint: String) -> String? {
        guard endpoint.hasPrefix("https://"), endpoint.utf8.count <= Self.maximumEndpointBytes,
            !endpoint.contains(where: { $0.isWhitespace || $0 == "@" || $0 == "\\" })
        else { return nil }
        let origin = WebOrigin.of(endpoint)
        let authority = origin.dropFirst("https://".count)
        let host = authority.hasPrefix("[") ? authority : authority.split(separator: ":").first ?? ""
        guard !host.isEmpty, origin.utf8.count < endpoint.utf8.count, contains(host: String(host))
        else { return nil }
        return String(host)
    }

    /// The longest endpoint taken; the services' own are a few hundred bytes.
    public static let maximumEndpointBytes = 1_024
}
