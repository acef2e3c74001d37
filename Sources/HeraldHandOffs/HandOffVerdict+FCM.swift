import HeraldCore

/// FCM's answers (SEMANTICS R4), by the status and the `FcmError` code of FCM's v1 errors:
/// `UNREGISTERED`, `SENDER_ID_MISMATCH` and an `INVALID_ARGUMENT` about the registration
/// token retire the token; `QUOTA_EXCEEDED`, `UNAVAILABLE`, `INTERNAL` and no answer are tried
/// again; `THIRD_PARTY_AUTH_ERROR` and `PERMISSION_DENIED` refuse the project's key.
extension HandOffVerdict {
    /// Google's least wait after a message-rate `QUOTA_EXCEEDED`.
    static let quotaBackoffSeconds: Int64 = 60

    init(_ answer: HTTP2Answer?) {
        guard let answer else {
            self = .retry(reason: "no answer", retryAfterSeconds: nil, atLeastSeconds: 0)
            return
        }
        guard answer.status != 200 else {
            // Most answers: their body (the message's name at FCM) is not read.
            self = .delivered
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
}
