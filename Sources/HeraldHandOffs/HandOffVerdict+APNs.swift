/// APNs' answers (SEMANTICS A3, A4), by Apple's documented status codes and reasons.
extension HandOffVerdict {
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
}
