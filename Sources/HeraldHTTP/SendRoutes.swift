import HeraldCore
import Hummingbird

/// `POST /v1/projects/{project}/messages:send`: the HTTP v1 send API.
struct SendRoutes {
    let environment: HTTPEnvironment

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/projects/:project/messages:send") { request, context in
            let projectName = try context.parameters.require("project")
            let (_, project) = try await environment.authenticator.authorize(
                authorization: request.headers[.authorization], projectName: projectName)
            let body = try await request.collectBody()
            let send = try SendRequest.decode(body.readableBytesView, limits: project.settings.message)
            let id = try await environment.dispatcher.send(send, project: project)
            return Response.json(.stringObject([("name", "projects/\(project.id)/messages/\(id)")]))
        }
    }
}
