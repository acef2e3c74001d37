/// A browser push service's answers (SEMANTICS W3, RFC 8030 and 8292): 201 and 202 take the
/// message; 404 and 410 say the subscription is gone; 413 and other 4xx refuse the message;
/// 401 and 403 refuse the application server key; 429, 5xx and no answer are tried again.
extension HandOffVerdict {
    init(webPush answer: HTTP2Answer?) {
        guard let answer else {
            self = .retry(reason: "no answer")
            return
        }
        switch answer.status {
        case 200...299:
            self = .delivered
        case 404, 410:
            self = .unregistered(reason: "HTTP \(answer.status)")
        case 401, 403:
            self = .credentialRefused(reason: "HTTP \(answer.status)")
        case 429, 500...599:
            self = .retry(reason: "HTTP \(answer.status)", retryAfterSeconds: answer.retryAfterSeconds)
        default:
            self = .refused(reason: "HTTP \(answer.status)")
        }
    }
}
