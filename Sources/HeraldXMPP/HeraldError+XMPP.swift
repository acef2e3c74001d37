public import HeraldCore

extension HeraldError {
    /// The error code of an XMPP `nack` for this error (reference §6).
    public var xmppCode: String {
        switch legacyResult {
        case "InvalidRegistration", "MissingRegistration", "MismatchSenderId": return "BAD_REGISTRATION"
        case "NotRegistered": return "DEVICE_UNREGISTERED"
        case "TopicsMessageRateExceeded": return "TOPICS_MESSAGE_RATE_EXCEEDED"
        case "Unavailable": return "SERVICE_UNAVAILABLE"
        case "InternalServerError": return "INTERNAL_SERVER_ERROR"
        default:
            guard canonicalStatus == .resourceExhausted else { return "INVALID_JSON" }
            return quotaSubject?.hasSuffix("/device") == true ? "DEVICE_MESSAGE_RATE_EXCEEDED" : "QUOTA_EXCEEDED"
        }
    }
}
