import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// A project's devices and topics at `/console/projects/{project}/devices`: a token looked
/// up (posted, so that it stays out of addresses and logs), the project's topics with their
/// subscribers, and its device groups with their members. A token of another project is not
/// found here.
struct DeviceRoutes {
    let directory: CredentialDirectory
    let store: any RegistrationStore & TopicStore & QueueStore
    let clock: any HeraldClock
    var access: ProjectAccess { ProjectAccess(directory: directory) }

    /// Subscribers are counted up to this many per topic, so that the page stays fast.
    static let countingUpTo = 10_000

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project/devices") { _, context in
            try await page(try access.opened(context), lookUp: nil)
        }
        pages.post("projects/:project/devices") { _, context in
            try await page(try access.opened(context), lookUp: context.form["token"] ?? "")
        }
    }

    private func page(_ opened: ProjectAccess.Opened, lookUp token: String?) async throws -> Response {
        let project = opened.project
        var values = opened.values("devices", title: "Devices and topics")
        if let token = token?.trimmingCharacters(in: .whitespaces) {
            values["token"] = token
            if let found = try await lookUp(token, project) {
                values["found"] = found
            } else {
                values["alert"] = "No app instance of \(project.id) has this token."
            }
        }
        let topics = try await store.topicSizes(
            projectID: project.id, limit: 200, countingUpTo: Self.countingUpTo)
        values["hasTopics"] = !topics.isEmpty
        values["topics"] = topics.map {
            [
                "topic": $0.topic,
                "subscribers": $0.subscribers >= Self.countingUpTo ? "\($0.subscribers) or more" : "\($0.subscribers)",
            ]
        }
        let groups = try await store.deviceGroups(projectID: project.id, limit: 200)
        values["hasGroups"] = !groups.isEmpty
        values["groups"] = groups.map { group -> [String: Any] in
            [
                "name": group.name, "key": Registration.redacted(group.notificationKey), "count": group.members.count,
                "members": group.members.map { ["token": Registration.redacted($0)] },
            ]
        }
        return ConsoleResponse.page("devices", values, status: token != nil && values["found"] == nil ? .notFound : .ok)
    }

    /// What is known of the app instance a token names, if it is one of the project's.
    private func lookUp(_ token: String, _ project: Project) async throws -> [String: Any]? {
        let store = store
        guard !token.isEmpty, let registration = try await store.registration(token: token),
            registration.projectID == project.id
        else { return nil }
        let device = try await store.device(androidID: registration.androidID)
        let lastConnection = device?.lastConnectedAt
        let inactiveSince = clock.now().adding(seconds: -Int64(project.settings.inactiveAfterDays) * 86_400)
        let state: String
        if let deleted = registration.deletedAt {
            state = "Deleted (uninstalled or unregistered) at \(UTCTime.shown(deleted))"
        } else if (lastConnection ?? registration.createdAt) < inactiveSince {
            state = "Inactive: no connection in \(project.settings.inactiveAfterDays) days"
        } else {
            state = "Active"
        }
        return [
            "app": registration.appID, "platform": registration.platform.rawValue,
            "device": String(registration.androidID), "created": UTCTime.shown(registration.createdAt),
            "lastConnection": lastConnection.map(UTCTime.shown) ?? "never",
            "pending": String(try await store.queuedCount(androidID: registration.androidID)),
            "topics": try await store.subscriptions(token: token).map(\.topic).joined(separator: ", "),
            "state": state,
        ]
    }
}
