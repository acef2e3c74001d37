import HTTPTypes
import HeraldCore
import HeraldStorage
import Hummingbird

/// Device groups, `/fcm/notification` (reference §5.3): create, add, remove and look up
/// by name; at most 20 members; names unique per sender; removing the last member
/// deletes the group. Errors are HTTP 400 with `{"error": "..."}`.
struct DeviceGroupRoutes {
    let authenticator: Authenticator
    let store: any RegistrationStore & TopicStore
    static let maximumMembers = 20
    /// The longest `notification_key_name`, in bytes (SEMANTICS T7).
    static let maximumNameBytes = 256

    func register(on router: Router<HeraldRequestContext>) {
        router.post("/fcm/notification") { request, _ in
            let project = try await groupProject(request)
            let body = try await request.collectBody()
            guard let json = try? JSONParser.parse(body.readableBytesView),
                let operation = json["operation"]?.stringValue
            else { return failure("The body must be a JSON object with an operation.") }
            let name = json["notification_key_name"]?.stringValue
            let key = json["notification_key"]?.stringValue
            let tokens = json["registration_ids"]?.arrayElements?.compactMap(\.stringValue) ?? []
            switch operation {
            case "create":
                return try await create(project: project, name: name, tokens: tokens)
            case "add", "remove":
                return try await change(
                    project: project, name: name, key: key, tokens: tokens, adding: operation == "add")
            default:
                return failure("Unknown operation \(operation).")
            }
        }
        router.get("/fcm/notification") { request, _ in
            let project = try await groupProject(request)
            guard let name = request.uri.queryParameters.get("notification_key_name"),
                let group = try await store.deviceGroup(
                    projectID: project.id, name: name, notificationKey: nil)
            else { return failure("notification_key not found", status: .notFound) }
            return Response.json(.stringObject([("notification_key", group.notificationKey)]))
        }
    }

    /// The project named by the `project_id` header (its sender id), when the credentials are its own.
    private func groupProject(_ request: Request) async throws -> Project {
        let project = try await authenticator.legacyProject(
            authorization: request.headers[.authorization])
        if let sender = request.headers[HTTPField.Name("project_id")!], sender != String(project.number) {
            throw HeraldError.permissionDenied("The project_id header names another sender.")
        }
        return project
    }

    private func create(project: Project, name: String?, tokens: [String]) async throws -> Response {
        guard let name, !name.isEmpty else { return failure("notification_key_name is required.") }
        guard name.utf8.count <= Self.maximumNameBytes else {
            return failure("notification_key_name is at most \(Self.maximumNameBytes) bytes.")
        }
        guard !tokens.isEmpty, tokens.count <= Self.maximumMembers else {
            return failure("A group has 1 to \(Self.maximumMembers) registration_ids.")
        }
        if let invalid = try await firstInvalid(tokens, project: project) {
            return failure(
                "registration_ids contains a token this project did not register: \(Registration.redacted(invalid))")
        }
        let limit = project.settings.maxDeviceGroups
        guard try await store.deviceGroupCount(projectID: project.id, countingUpTo: limit) < limit else {
            return failure("The project has \(limit) device groups, its most (max-device-groups).")
        }
        let group = DeviceGroup(
            projectID: project.id, name: name, notificationKey: DeviceGroup.makeKey(),
            members: Array(Set(tokens)).sorted())
        do {
            try await store.createDeviceGroup(group)
        } catch StoreError.conflict {
            return failure("notification_key_name \(name) exists already.")
        }
        return Response.json(.stringObject([("notification_key", group.notificationKey)]))
    }

    private func change(project: Project, name: String?, key: String?, tokens: [String], adding: Bool) async throws
        -> Response
    {
        guard key != nil || name != nil else { return failure("notification_key is required.") }
        guard
            let group = try await store.deviceGroup(projectID: project.id, name: name, notificationKey: key)
        else { return failure("notification_key not found", status: .notFound) }
        guard !tokens.isEmpty else { return failure("registration_ids is required.") }
        var members = Set(group.members)
        if adding {
            if let invalid = try await firstInvalid(tokens, project: project) {
                return failure(
                    "registration_ids contains a token this project did not register: \(Registration.redacted(invalid))"
                )
            }
            members.formUnion(tokens)
            guard members.count <= Self.maximumMembers else {
                return failure("A group has at most \(Self.maximumMembers) members.")
            }
        } else {
            members.subtract(tokens)
        }
        try await store.updateDeviceGroup(
            projectID: project.id, notificationKey: group.notificationKey, members: members.sorted())
        return Response.json(.stringObject([("notification_key", group.notificationKey)]))
    }

    private func firstInvalid(_ tokens: [String], project: Project) async throws -> String? {
        for token in tokens {
            guard RegistrationTokenFormat.isWellFormed(token),
                let registration = try await store.registration(token: token),
                registration.projectID == project.id, registration.deletedAt == nil
            else { return token }
        }
        return nil
    }

    private func failure(_ message: String, status: HTTPResponse.Status = .badRequest) -> Response {
        Response.json(.stringObject([("error", message)]), status: status)
    }
}
