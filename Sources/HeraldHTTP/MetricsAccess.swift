import HeraldCore

/// Who may read `GET /metrics`, which names every project with its counts.
public enum MetricsAccess: Sendable, Equatable {
    /// Anyone who reaches the HTTP port: the default when it listens on loopback only.
    case open
    /// Requests with `Authorization: Bearer <token>` (`--metrics-token`).
    case bearer(String)
    /// Nobody: the default when the HTTP port listens beyond loopback and no token is set.
    case closed

    /// The default for an HTTP server listening on `host` with an optional token.
    public static func forListening(on host: String, token: String?) -> MetricsAccess {
        if let token, !token.isEmpty { return .bearer(token) }
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        return loopback ? .open : .closed
    }

    /// Whether a request with this Authorization header may read the metrics.
    public func allows(authorization: String?) -> Bool {
        switch self {
        case .open: true
        case .closed: false
        case .bearer(let token):
            // Compared in constant time: the token is a secret.
            Array((authorization ?? "").utf8).constantTimeEquals(Array("Bearer \(token)".utf8))
        }
    }
}
