import HeraldCore

/// Who may read `GET /metrics`, which names every project with its counts. A listener's
/// address does not say who connects: a proxy on the same host connects from loopback for
/// everyone behind it. So the token is required unless the operator opens a loopback
/// listener deliberately (`--metrics-without-token`).
public enum MetricsAccess: Sendable, Equatable {
    /// Anyone who reaches the listener: a loopback listener with `--metrics-without-token`.
    case open
    /// Requests with `Authorization: Bearer <token>` (`--metrics-token`).
    case bearer(String)
    /// Nobody: no token is set, and the listener is not a loopback one opened deliberately.
    case closed

    /// The access of a listener on `host`, given the token and whether loopback listeners
    /// serve metrics without one.
    public static func forListening(on host: String, token: String?, openOnLoopback: Bool = false) -> MetricsAccess {
        if let token, !token.isEmpty { return .bearer(token) }
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        return loopback && openOnLoopback ? .open : .closed
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
