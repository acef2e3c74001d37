import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// In front of every console page but sign-in: no session, no page (a browser is sent to
/// sign in); and a form posted without its session's CSRF token is refused before anything
/// reads it. The form's fields go to the handler in the context.
struct ConsoleGuard: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    let store: any ConsoleStore

    /// The largest form the console accepts.
    static let maximumFormBytes = 64 * 1024

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let session = context.sessions.session, let user = try await store.consoleUser(name: session.user)
        else {
            // A user removed since signing in is signed out.
            if context.sessions.session != nil { context.sessions.clearSession() }
            if request.method == .get || request.method == .head {
                return .redirect(to: "/console/sign-in", type: .found)
            }
            return ConsoleResponse.refused(.forbidden, "Sign in first.")
        }
        var context = context
        context.signedIn = session
        context.user = user
        if request.method == .post {
            let body = try await request.body.collect(upTo: Self.maximumFormBytes)
            guard let form = FormBody.parse(body.readableBytesView),
                ConsoleResponse.sameToken(form["csrf"], session.csrfToken)
            else {
                context.logger.warning(
                    "console form refused: no or wrong CSRF token", metadata: ["user": "\(session.user)"])
                return ConsoleResponse.refused(.forbidden, "This form has expired or did not come from the console.")
            }
            context.form = form
        }
        return try await next(request, context)
    }
}
