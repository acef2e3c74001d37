public import HeraldCore
public import HeraldHTTP
import HeraldStorage
public import Hummingbird
import HummingbirdAuth
import HummingbirdBcrypt
import NIOPosix

/// The console under `/console`: sign-in, then only the projects a user is given. A
/// session lives in a cookie (`HttpOnly`, `SameSite=Strict`, `Secure` when served over
/// https) that the API never reads; the API's credentials open no console page.
public struct ConsoleRoutes: Sendable {
    /// The session cookie's name.
    public static let sessionCookie = "herald_console"
    /// The cookie that carries the sign-in form's CSRF token, before there is a session.
    static let signInCookie = "herald_console_sign_in"
    /// How long a session lasts.
    static let sessionLife: Duration = .seconds(12 * 3600)
    /// Hashed when a name is unknown, so that an answer takes as long whether it exists or not.
    static let unknownUserHash = Bcrypt.hash(SecureRandom.token(bytes: 16))

    let environment: HTTPEnvironment
    let secureCookies: Bool
    /// Herald's public address, which the key files the console issues point at.
    let publicURL: String
    let throttle = SignInThrottle()

    public init(environment: HTTPEnvironment, secureCookies: Bool, publicURL: String) {
        self.environment = environment
        self.secureCookies = secureCookies
        self.publicURL = publicURL
    }

    public func register(on router: Router<HeraldRequestContext>) {
        let console = router.group("console", context: ConsoleRequestContext.self)
            .add(
                middleware: SessionMiddleware(
                    storage: StorePersistDriver(store: environment.store, clock: environment.clock),
                    sessionCookieParameters: SessionCookieParameters(
                        name: Self.sessionCookie, path: "/console", secure: secureCookies, sameSite: .strict),
                    defaultSessionExpiration: Self.sessionLife))
        console.get("sign-in") { request, context in signInPage(request, context, error: nil) }
        console.post("sign-in") { request, context in try await signIn(request, context) }
        let pages = console.group().add(middleware: ConsoleGuard(store: environment.store))
        pages.get { _, context in try await projectsPage(context) }
        pages.post("sign-out") { _, context in
            context.sessions.clearSession()
            return Response.redirect(to: "/console/sign-in", type: .normal)
        }
        ProjectPages(environment: environment, publicURL: publicURL).register(on: pages)
    }

    private func signInPage(_ request: Request, _ context: ConsoleRequestContext, error: String?) -> Response {
        let token = request.cookies[Self.signInCookie]?.value ?? SecureRandom.token(bytes: 32)
        var response = ConsoleResponse.page(
            "sign-in", ["title": "Sign in", "csrf": token, "error": error as Any],
            status: error == nil ? .ok : .unauthorized)
        response.setCookie(
            Cookie(
                name: Self.signInCookie, value: token, maxAge: 3600, path: "/console", secure: secureCookies,
                httpOnly: true, sameSite: .strict))
        return response
    }

    private func signIn(_ request: Request, _ context: ConsoleRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: ConsoleGuard.maximumFormBytes)
        guard let form = FormBody.parse(body.readableBytesView),
            let expected = request.cookies[Self.signInCookie]?.value,
            ConsoleResponse.sameToken(form["csrf"], expected)
        else {
            return ConsoleResponse.refused(.forbidden, "This form has expired or did not come from the console.")
        }
        let name = form["name"] ?? ""
        let password = form["password"] ?? ""
        guard let delay = throttle.begin(name: name, address: context.sourceAddress, now: environment.clock.now())
        else {
            environment.metrics.increment("herald_console_sign_in_failures_total", [("reason", "concurrent")])
            return ConsoleResponse.refused(
                .tooManyRequests, "Another sign-in for this name or from this address is being checked; try again.")
        }
        let user: ConsoleUser?
        let matches: Bool
        do {
            if delay > 0 { try await Task.sleep(for: .seconds(delay)) }
            guard environment.passwordChecks.enter() else {
                throttle.abandoned(name: name, address: context.sourceAddress)
                environment.metrics.increment("herald_console_sign_in_failures_total", [("reason", "busy")])
                return ConsoleResponse.refused(
                    .tooManyRequests, "Too many sign-ins are being checked on this server; try again in a moment.")
            }
            defer { environment.passwordChecks.leave() }
            user = try await environment.store.consoleUser(name: name)
            // Off the event loop: the unknown name's hash is made on first use, and checking a
            // hash takes as long as making one.
            let known = user?.passwordHash
            matches = try await NIOThreadPool.singleton.runIfActive {
                Bcrypt.verify(password, hash: known ?? Self.unknownUserHash)
            }
        } catch {
            throttle.failed(name: name, address: context.sourceAddress, now: environment.clock.now())
            throw error
        }
        guard let user, matches else {
            throttle.failed(name: name, address: context.sourceAddress, now: environment.clock.now())
            environment.metrics.increment("herald_console_sign_in_failures_total", [("reason", "wrong")])
            context.logger.warning(
                "console sign-in refused", metadata: ["name": "\(name)", "address": "\(context.sourceAddress)"])
            return signInPage(request, context, error: "Wrong name or password.")
        }
        throttle.succeeded(name: name, address: context.sourceAddress)
        context.sessions.setSession(ConsoleSession(user: user.name, csrfToken: SecureRandom.token(bytes: 32)))
        context.logger.info("console sign-in", metadata: ["name": "\(user.name)"])
        return .redirect(to: "/console", type: .normal)
    }

    private func projectsPage(_ context: ConsoleRequestContext) async throws -> Response {
        guard let user = context.user, let session = context.signedIn else { throw HTTPError(.unauthorized) }
        let projects = try await environment.store.projects().filter { user.mayOpen(projectID: $0.id) }
        return ConsoleResponse.page(
            "projects",
            [
                "title": "Projects", "user": user.name, "csrf": session.csrfToken,
                "projects": projects.map { ["id": $0.id, "number": String($0.number)] },
            ])
    }
}
