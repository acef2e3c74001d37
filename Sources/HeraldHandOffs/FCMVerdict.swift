import HeraldCore

/// What FCM's answer to one hand-off means for its entry (SEMANTICS R4), by the status and
/// the `FcmError` code of FCM's v1 errors.
enum FCMVerdict: Sendable, Equatable {
    /// 200: FCM took it; the entry is delivered.
    case delivered
    /// The token is gone or was never one (`UNREGISTERED`, `INVALID_ARGUMENT` about the
    /// token, `SENDER_ID_MISMATCH`): its registration is deleted, so the next send to it is
    /// `UNREGISTERED` at once.
    case unregistered(reason: String)
    /// Try again no sooner than `atLeastSeconds` or FCM's `Retry-After`, with backoff
    /// (`QUOTA_EXCEEDED`, `UNAVAILABLE`, `INTERNAL`, no answer).
    case retry(reason: String, retryAfterSeconds: Int64?, atLeastSeconds: Int64)
    /// The access token was not taken (401): make a new one, then try again.
    case renewToken
    /// FCM refuses the project's key (`THIRD_PARTY_AUTH_ERROR`, `PERMISSION_DENIED`): the
    /// project's hand-offs wait until it changes, with a probe now and then.
    case credentialRefused(reason: String)
    /// FCM refuses this message for good (`INVALID_ARGUMENT` about the message): it is dropped.
    case refused(reason: String)

    /// Google's least wait after a message-rate `QUOTA_EXCEEDED`.
    static let quotaBackoffSeconds: Int64 = 60

    init(_ answer: HTTP2Answer?) {
        guard let answer else {
            self = .retry(reason: "no answer", retryAfterSeconds: nil, atLeastSeconds: 0)
            return
        }
        let error = (try? JSONParser.parse(answer.body))?["error"]
        let status = error?["status"]?.stringValue ?? ""
        let code =
            error?["details"]?.arrayElements?.lazy.compactMap { $0["errorCode"]?.stringValue }.first ?? status
        let message = error?["message"]?.stringValue ?? ""
        switch (answer.status, code) {
        case (200, _):
            self = .delivered
        case (404, _), (_, "UNREGISTERED"), (_, "SENDER_ID_MISMATCH"):
            self = .unregistered(reason: code.isEmpty ? "UNREGISTERED" : code)
        case (400, _) where message.localizedCaseInsensitiveContains("registration token"):
            self = .unregistered(reason: "INVALID_ARGUMENT")
        case (429, _):
            self = .retry(
                reason: code.isEmpty ? "QUOTA_EXCEEDED" : code, retryAfterSeconds: answer.retryAfterSeconds,
                atLeastSeconds: Self.quotaBackoffSeconds)
        case (401, _):
            self = .renewToken
        case (_, "THIRD_PARTY_AUTH_ERROR"), (403, _):
            self = .credentialRefused(reason: code.isEmpty ? "PERMISSION_DENIED" : code)
        case (400, _), (413, _):
            self = .refused(reason: code.isEmpty ? "INVALID_ARGUMENT" : code)
        default:
            self = .retry(
                reason: code.isEmpty ? "HTTP \(answer.status)" : code, retryAfterSeconds: answer.retryAfterSeconds,
                atLeastSeconds: 0)
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
