/// What an answer from APNs means for the entry handed off (SEMANTICS A3, A4), by
/// Apple's documented status codes and reasons.
public enum APNsVerdict: Sendable, Equatable {
    /// 200: APNs took it; the entry is delivered.
    case delivered
    /// The app instance is gone (410 `Unregistered`, 400 `BadDeviceToken`,
    /// `DeviceTokenNotForTopic`): its registration is deleted.
    case unregistered(reason: String)
    /// Try again later (429, 5xx, no answer).
    case retry(reason: String)
    /// The provider token is too old: make a new one, then try again.
    case renewToken
    /// APNs refuses the project's credential; nothing of the project goes until it changes.
    case credentialRefused(reason: String)
    /// APNs refuses this message for good (too large, malformed): it is dropped.
    case refused(reason: String)

    /// The credential-related 4xx reasons.
    static let credentialReasons: Set<String> = [
        "BadCertificate", "BadCertificateEnvironment", "InvalidProviderToken", "MissingProviderToken", "Forbidden",
        "TopicDisallowed", "MissingTopic", "BadTopic",
    ]

    public init(status: Int, reason: String?) {
        let reason = reason ?? ""
        switch status {
        case 200:
            self = .delivered
        case 410:
            self = .unregistered(reason: reason.isEmpty ? "Unregistered" : reason)
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic":
            self = .unregistered(reason: reason)
        case 403 where reason == "ExpiredProviderToken":
            self = .renewToken
        case 429, 500...599:
            self = .retry(reason: reason.isEmpty ? "HTTP \(status)" : reason)
        case 400, 403, 405, 413:
            self =
                Self.credentialReasons.contains(reason) ? .credentialRefused(reason: reason) : .refused(reason: reason)
        default:
            self = .retry(reason: "HTTP \(status) \(reason)")
        }
    }

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
