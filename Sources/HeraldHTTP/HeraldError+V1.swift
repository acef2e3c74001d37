public import HeraldCore
public import Hummingbird

extension HeraldError: HTTPResponseError {
    /// The HTTP status of this error.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: canonicalStatus.httpStatus) }

    /// The v1 API's error body: a `google.rpc.Status` with an `FcmError` detail when the
    /// error has an FCM code, a `BadRequest` detail for field violations and a
    /// `QuotaFailure` detail for quota errors. This is the one place it is rendered.
    public var v1Body: JSONValue {
        var details: [JSONValue] = []
        if let fcmCode {
            details.append(
                .stringObject([
                    ("@type", "type.googleapis.com/google.firebase.fcm.v1.FcmError"), ("errorCode", fcmCode.rawValue),
                ]))
        }
        if !fieldViolations.isEmpty {
            details.append(
                .object([
                    (key: "@type", value: .string("type.googleapis.com/google.rpc.BadRequest")),
                    (
                        key: "fieldViolations",
                        value: .array(
                            fieldViolations.map {
                                .stringObject([("field", $0.field), ("description", $0.description)])
                            })
                    ),
                ]))
        }
        if let quotaSubject {
            details.append(
                .object([
                    (key: "@type", value: .string("type.googleapis.com/google.rpc.QuotaFailure")),
                    (
                        key: "violations",
                        value: .array([.stringObject([("subject", quotaSubject), ("description", message)])])
                    ),
                ]))
        }
        var error: [(key: String, value: JSONValue)] = [
            (key: "code", value: .number(Double(canonicalStatus.httpStatus))),
            (key: "message", value: .string(message)),
            (key: "status", value: .string(canonicalStatus.name)),
        ]
        if !details.isEmpty { error.append((key: "details", value: .array(details))) }
        return .object([(key: "error", value: .object(error))])
    }

    public var headers: HTTPFields {
        var fields: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        if let retryAfterSeconds { fields[.retryAfter] = String(retryAfterSeconds) }
        return fields
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: v1Body.rendered)))
    }
}

extension Response {
    /// A JSON response.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response
    {
        var headers: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        headers.append(contentsOf: extra)
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: value.rendered)))
    }
}
