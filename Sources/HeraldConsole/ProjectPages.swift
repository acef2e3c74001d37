import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// A project's pages under `/console/projects/{project}`, for users given the project: its
/// overview with the composer and its limits, and the composer's send. A project the user
/// is not given is not found, whether it exists or not.
struct ProjectPages {
    let environment: HTTPEnvironment

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project") { _, context in
            let (user, session, project) = try opened(context)
            return ConsoleResponse.page(
                "project",
                [
                    "title": project.id, "project": project.id, "user": user.name, "csrf": session.csrfToken,
                    "limits": Self.limits(project.settings),
                ])
        }
        pages.post("projects/:project/send") { _, context in
            let (user, session, project) = try opened(context)
            var values: [String: Any] = [
                "title": project.id, "project": project.id, "user": user.name, "csrf": session.csrfToken,
            ]
            do {
                let message = try ConsoleComposition(form: context.form).message()
                let send = try SendRequest.decode(message.renderedBytes, limits: project.settings.message)
                let id = try await environment.admittingDownstream(project, surface: "console") {
                    try await environment.dispatcher.send(send, project: project)
                }
                context.logger.info("console send", metadata: ["user": "\(user.name)", "project": "\(project.id)"])
                values["name"] = "projects/\(project.id)/messages/\(id)"
                return ConsoleResponse.page("sent", values)
            } catch let error as HeraldError {
                values["error"] = error.message
                return ConsoleResponse.page("sent", values, status: .badRequest)
            }
        }
    }

    /// The signed-in user, their session and the project the path names, if they are given it.
    private func opened(_ context: ConsoleRequestContext) throws -> (ConsoleUser, ConsoleSession, Project) {
        guard let user = context.user, let session = context.signedIn else { throw HTTPError(.unauthorized) }
        let name = try context.parameters.require("project")
        guard user.mayOpen(projectID: name), let project = environment.directory.project(named: name),
            project.id == name
        else {
            throw ConsoleRefusal(
                status: .notFound, reason: "There is no project \(name) that you may open.", session: session)
        }
        return (user, session, project)
    }

    static func limits(_ settings: ProjectSettings) -> [[String: String]] {
        [
            ("T1 downstream messages per minute", settings.downstreamPerMinute),
            ("T2 topic operations per second", settings.topicOpsPerSecond),
            ("T3 fanouts at once", settings.maxFanouts),
            ("T4 collapsible burst per device", settings.collapsibleBurst),
            ("T4 seconds to refill one", settings.collapsibleRefillSeconds),
            ("T5 XMPP connections per minute", settings.xmppConnectsPerMinute),
            ("T5 XMPP connections", settings.xmppConnections),
            ("T6 messages per device per minute", settings.devicePerMinute),
            ("T6 messages per device per hour", settings.devicePerHour),
            ("Messages waiting per device", settings.maxPending),
        ].map { ["name": $0.0, "value": String($0.1)] }
    }
}
