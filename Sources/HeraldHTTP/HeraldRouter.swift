public import HeraldCore
import HeraldDelivery
import HeraldStorage
import HeraldTelemetry
public import Hummingbird
import Logging
import NIOCore

/// Builds the router for every HTTP surface.
public enum HeraldRouter {
    /// The largest request body read; larger ones are refused with 413.
    static let maximumBodyBytes = 1 << 20

    /// A router with every route Herald serves; with `dropIn`, only under the host names
    /// that serve each (drop-in mode's listener).
    public static func make(_ environment: HTTPEnvironment, dropIn: DropInHosts? = nil) -> Router<HeraldRequestContext>
    {
        let router = Router(context: HeraldRequestContext.self)
        router.add(
            middleware: RequestMetricsMiddleware(
                metrics: environment.metrics, errors: environment.errors, directory: environment.directory,
                clock: environment.clock, logger: environment.logger))
        if let dropIn { router.add(middleware: DropInRoutingMiddleware(hosts: dropIn)) }
        let store = environment.store
        let authenticator = environment.authenticator
        let clock = environment.clock
        OperationsRoutes(
            renderMetrics: environment.renderMetrics, access: environment.metricsAccess, health: environment.health
        )
        .register(on: router)
        TokenRoutes(
            store: store, authenticator: authenticator, tokens: environment.tokens, clock: clock,
            metrics: environment.metrics
        ).register(on: router)
        let send = SendEnvironment(
            authenticator: authenticator, admission: environment.admission, dispatcher: environment.dispatcher,
            groups: store, metrics: environment.metrics, logger: environment.logger)
        SendRoutes(environment: send).register(on: router)
        LegacySendRoutes(environment: send).register(on: router)
        WebPushRoutes(relay: environment.webPush, logger: environment.logger).register(on: router)
        DeviceRegistrationRoutes(environment: environment.registration).register(on: router)
        DeliveryDataRoutes(authenticator: authenticator, stats: store, clock: clock).register(on: router)
        TopicRoutes(authenticator: authenticator, store: store, quotas: environment.quotas, clock: clock)
            .register(on: router)
        AppleRegistrationRoutes(environment: environment.registration).register(on: router)
        DeviceGroupRoutes(authenticator: authenticator, store: store).register(on: router)
        MessageRoutes(authenticator: authenticator, events: store, clock: clock, eventIDs: environment.eventIDs)
            .register(on: router)
        EventStreamRoutes(
            authenticator: authenticator, events: store, tail: environment.eventTail, streams: environment.eventStreams,
            eventIDs: environment.eventIDs
        )
        .register(on: router)
        OpenAPIDocument.register(on: router)
        return router
    }
}

/// Counts every request by route and status and every error by its code (and by its
/// project, when the path names one), and renders errors: Herald's own in FCM's shape,
/// anything unexpected as `INTERNAL`.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: HeraldMetrics
    let errors: ErrorLog
    /// Errors are counted only for projects that exist: a path's name is the caller's to choose.
    let directory: CredentialDirectory
    let clock: any HeraldClock
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let route = context.endpointPath ?? "unmatched"
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as HeraldError {
            response = try answer(error, request: request, context: context)
        } catch StoreError.unavailable(let reason) {
            // The shared store is failing over: the SDKs retry a 503 after Retry-After.
            logger.warning("store unavailable", metadata: ["route": "\(route)", "error": "\(reason)"])
            response = try answer(
                HeraldError.unavailable(retryAfterSeconds: 2, "The message store is unavailable; retry later."),
                request: request, context: context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            logger.error("request failed", metadata: ["route": "\(route)", "error": "\(error)"])
            metrics.increment("herald_errors_total", [("code", "INTERNAL")])
            response = try HeraldError.internal().response(from: request, context: context)
        }
        metrics.countAnswer(route: route, status: response.status)
        return response
    }

    /// An error in FCM's shape, counted for the metrics and for the project it names.
    private func answer(_ error: HeraldError, request: Request, context: Context) throws -> Response {
        metrics.countError(error)
        if let name = context.parameters.get("project"), let project = directory.project(named: String(name)) {
            errors.count(error, projectID: project.id, at: clock.now())
        }
        return try error.response(from: request, context: context)
    }
}

extension HeraldMetrics {
    /// Counts an error answered in FCM's shape, by its code.
    func countError(_ error: HeraldError) {
        increment("herald_errors_total", [("code", error.fcmCode?.rawValue ?? error.canonicalStatus.name)])
    }

    /// Counts an answer by route and status.
    func countAnswer(route: String, status: HTTPResponse.Status) {
        increment("herald_http_requests_total", [("route", route), ("status", String(status.code))])
    }
}

extension Request {
    /// The body, read up to Herald's limit. Only a body over the limit is a 413: a read that
    /// fails otherwise (the client left, the task was cancelled) ends with its own error.
    func collectBody() async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: HeraldRouter.maximumBodyBytes)
        } catch is NIOTooManyBytesError {
            throw HeraldError(
                status: .payloadTooLarge,
                message: "The request body is larger than \(HeraldRouter.maximumBodyBytes) bytes.")
        }
    }
}
