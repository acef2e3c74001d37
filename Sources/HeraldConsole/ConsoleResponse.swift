import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// The console's answers: HTML pages that no other site may frame or cache.
enum ConsoleResponse {
    static func page(_ template: String, _ values: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        // For browsers that predate frame-ancestors, and so no URL leaves the console.
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        let body = ConsolePages.render(template, values)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func refused(_ status: HTTPResponse.Status, _ reason: String, session: ConsoleSession? = nil) -> Response {
        page(
            "refused",
            [
                "title": status.reasonPhrase, "reason": reason, "user": session?.user as Any,
                "csrf": session?.csrfToken as Any,
            ],
            status: status)
    }

    /// Whether a form's token is the expected one, compared in constant time.
    static func sameToken(_ given: String?, _ expected: String) -> Bool {
        guard let given, !expected.isEmpty else { return false }
        return Array(given.utf8).constantTimeEquals(Array(expected.utf8))
    }
}
