import Hummingbird

/// A console request refused with a page saying why (a project the user is not given).
struct ConsoleRefusal: HTTPResponseError {
    let status: HTTPResponse.Status
    let reason: String
    let session: ConsoleSession?

    func response(from request: Request, context: some RequestContext) throws -> Response {
        ConsoleResponse.refused(status, reason, session: session)
    }
}
