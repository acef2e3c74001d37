import HeraldCore
import Hummingbird

/// Drop-in mode's routing by host: a request is served only under a host name whose client
/// would send it there (`DropInHosts`); anything else is not found, in FCM's shape, before
/// any route sees it.
struct DropInRoutingMiddleware<Context: RequestContext>: RouterMiddleware {
    let hosts: DropInHosts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let authority = request.head.authority ?? ""  // HTTP/1.1 Host or HTTP/2 :authority
        guard hosts.serves(authority: authority, path: request.uri.path) else {
            throw HeraldError.notFound("Nothing is served at \(request.uri.path) under this host name.")
        }
        return try await next(request, context)
    }
}
