import HeraldCore
import Hummingbird

/// `POST /v1/projects/{project}/messages:send`: the HTTP v1 send API.
struct SendRoutes {
    /// The send API's path; also its route label in `herald_http_requests_total`.
    static let base = "/v1/projects/{project}/messages:send"

    let environment: HTTPEnvironment

    func register(on router: Router<HeraldRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.base)) { request, context in
            let projectName = try context.parameters.require("project")
            let (_, project) = try await environment.authenticator.authorize(
                authorization: request.headers[.authorization], host: request.head.authority, projectName: projectName)
            guard environment.sends.enter() else {
                environment.metrics.increment("herald_overload_rejections_total", [("surface", "send")])
                throw HeraldError.unavailable(retryAfterSeconds: 1, "Herald is overloaded; retry later.")
            }
            defer { environment.sends.leave() }
            // SEMANTICS T1: counted before the work; given back when the answer is a 429 or a server error.
            let admittedAt = environment.clock.now()
            try environment.quotas.admitDownstream(project, now: admittedAt)
            do {
                let accept = { () async throws -> Response in
                    let body = try await request.collectBody()
                    let send = try SendRequest.decode(body.readableBytesView, limits: project.settings.message)
                    let id = try await environment.dispatcher.send(send, project: project)
                    return Response.json(.stringObject([("name", "projects/\(project.id)/messages/\(id)")]))
                }
                // An overloaded project's accepted sends wait behind other projects' work.
                guard environment.quotas.isRefusingDownstream(projectID: project.id, now: admittedAt) else {
                    return try await accept()
                }
                environment.metrics.increment("herald_sends_deferred_total", [("project", project.id)])
                return try await withTaskExecutorPreference(environment.lanes.after) { try await accept() }
            } catch let error as HeraldError where error.canonicalStatus.httpStatus < 429 {
                throw error
            } catch {
                environment.quotas.refundDownstream(projectID: project.id, at: admittedAt)
                throw error
            }
        }
    }
}
