import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// The project a console page's path names, opened for its signed-in user if they are given
/// it; a project they are not given is not found, whether it exists or not.
struct ProjectAccess {
    let directory: CredentialDirectory

    struct Opened {
        let user: ConsoleUser
        let session: ConsoleSession
        let project: Project

        /// What every project page renders: its title, the user, the CSRF token, the navigation.
        func values(_ page: String, title: String? = nil) -> [String: Any] {
            [
                "title": title.map { "\($0) · \(project.id)" } ?? project.id, "project": project.id,
                "user": user.name, "csrf": session.csrfToken, "admin": user.isAdmin,
                "nav": ProjectAccess.pages.map {
                    ["href": $0.0, "label": $0.1, "current": $0.0 == page] as [String: Any]
                },
            ]
        }
    }

    /// The project's pages, by the last part of their address (empty for the composer).
    static let pages = [
        ("", "Compose"), ("scheduled", "Scheduled"), ("reports", "Reports"), ("quotas", "Quotas and errors"),
        ("devices", "Devices and topics"), ("credentials", "Credentials"),
    ]

    func opened(_ context: ConsoleRequestContext) throws -> Opened {
        guard let user = context.user, let session = context.signedIn else { throw HTTPError(.unauthorized) }
        let name = try context.parameters.require("project")
        guard user.mayOpen(projectID: name), let project = directory.project(named: name),
            project.id == name
        else {
            throw ConsoleRefusal(
                status: .notFound, reason: "There is no project \(name) that you may open.", session: session)
        }
        return Opened(user: user, session: session, project: project)
    }
}
