/// What another push service's answer to one hand-off means for its entry (SEMANTICS A3,
/// A4 for APNs, R4 for FCM); each service's answers are read by an initializer of its own.
public enum HandOffVerdict: Sendable, Equatable {
    /// The service took it; the entry is delivered.
    case delivered
    /// The app instance is gone: its registration is deleted, so the next send to it is
    /// `UNREGISTERED` at once.
    case unregistered(reason: String)
    /// Try again later, no sooner than the service's `Retry-After` or `atLeastSeconds`, with
    /// backoff.
    case retry(reason: String, retryAfterSeconds: Int64? = nil, atLeastSeconds: Int64 = 0)
    /// The provider or access token was not taken: make a new one, then try again.
    case renewToken
    /// The service refuses the project's credential; nothing of the project goes until it changes.
    case credentialRefused(reason: String)
    /// The service refuses this message for good (too large, malformed): it is dropped.
    case refused(reason: String)

    /// The metric label of a verdict.
    var outcome: String {
        switch self {
        case .delivered: "delivered"
        case .unregistered: "unregistered"
        case .retry: "retry"
        case .renewToken: "renew_token"
        case .credentialRefused: "credential_refused"
        case .refused: "refused"
        }
    }
}
