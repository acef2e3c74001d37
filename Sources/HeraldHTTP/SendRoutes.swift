import HTTPTypes
import HeraldCore
import Hummingbird

/// `POST /v1/projects/{project}/messages:send`: the HTTP v1 send API.
struct SendRoutes {
    /// The send API's path; also its route label in `herald_http_requests_total`.
    static let base = "/v1/projects/{project}/messages:send"

    let environment: SendEnvironment

    func register(on router: Router<HeraldRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.base)) { request, context in
            let projectName = try context.parameters.require("project")
            let (_, project) = try await environment.authenticator.authorize(
                authorization: request.headers[.authorization], projectName: projectName)
            return try await environment.admission.admitting(project, surface: "send") {
                let body = try await request.collectBody()
                var send = try SendRequest.decode(body.readableBytesView, limits: project.settings.message)
                send.isHandOff = request.headers[HTTPField.Name(SendRequest.handOffHeader)!] != nil
                let id = try await environment.dispatcher.send(send, project: project)
                return Response.json(.stringObject([("name", "projects/\(project.id)/messages/\(id)")]))
            }
        }
    }
}
