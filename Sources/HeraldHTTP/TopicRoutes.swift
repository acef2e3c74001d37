import HeraldCore
import HeraldDelivery
import HeraldStorage
import Hummingbird

/// Topic management in all three API generations (reference §3): the v1
/// `topicSubscriptions` resource, the Instance ID batch API, and Instance ID info.
struct TopicRoutes {
    let authenticator: Authenticator
    let store: any RegistrationStore & TopicStore
    let quotas: Quotas
    let clock: any HeraldClock
    /// Tokens one batch request may name.
    static let batchLimit = 1000
    /// Topics one app instance may subscribe to.
    static let topicsPerToken = 2000

    func register(on router: Router<HeraldRequestContext>) {
        let base = "/v1/projects/:project/registrations/:token/topicSubscriptions"
        router.post(RouterPath(stringLiteral: base)) { request, context in
            let (project, registration) = try await ownedRegistration(request, context)
            try admitOneChange(project)
            let query = request.uri.queryParameters
            let topic = TopicName.stripPrefix(query.get("topic_name") ?? query.get("topicName") ?? "")
            let subscription = TopicSubscription(
                projectID: project.id, token: registration.token, topic: try validTopic(topic),
                createdAt: clock.now())
            guard try await subscribe(subscription) else {
                throw HeraldError.alreadyExists("The registration is subscribed to topic \(topic) already.")
            }
            return Response.json(resource(subscription))
        }
        router.get(RouterPath(stringLiteral: base)) { request, context in
            let (_, registration) = try await ownedRegistration(request, context)
            let query = request.uri.queryParameters
            let pageSize = min(1000, max(1, query.get("pageSize").flatMap { Int($0) } ?? 100))
            let after =
                query.get("pageToken").flatMap { Base64URL.decode($0) }.map { String(decoding: $0, as: UTF8.self) }
                ?? ""
            let all = try await store.subscriptions(token: registration.token).filter { $0.topic > after }
            let page = all.prefix(pageSize)
            var body: [(key: String, value: JSONValue)] = [
                (key: "topicSubscriptions", value: .array(page.map(resource)))
            ]
            if all.count > page.count, let last = page.last {
                body.append((key: "nextPageToken", value: .string(Base64URL.encode(last.topic.utf8))))
            }
            return Response.json(.object(body))
        }
        router.get(RouterPath(stringLiteral: base + "/:topic")) { request, context in
            let (_, registration) = try await ownedRegistration(request, context)
            let topic = try pathValue(context, "topic")
            guard
                let subscription = try await store.subscriptions(token: registration.token)
                    .first(where: { $0.topic == topic })
            else { throw HeraldError.notFound("The registration is not subscribed to topic \(topic).") }
            return Response.json(resource(subscription))
        }
        router.delete(RouterPath(stringLiteral: base + "/:topic")) { request, context in
            let (project, registration) = try await ownedRegistration(request, context)
            try admitOneChange(project)
            let topic = try pathValue(context, "topic")
            let query = request.uri.queryParameters
            let allowMissing = (query.get("allow_missing") ?? query.get("allowMissing")) == "true"
            let removed = try await store.unsubscribe(token: registration.token, topic: topic)
            guard removed || allowMissing else {
                throw HeraldError.notFound("The registration is not subscribed to topic \(topic).")
            }
            return Response.json(.object([]))
        }
        router.post("/iid/v1:batchAdd") { request, _ in
            try await authenticator.instanceIDRequest(request) { try await batch(request, project: $0, adding: true) }
        }
        router.post("/iid/v1:batchRemove") { request, _ in
            try await authenticator.instanceIDRequest(request) { try await batch(request, project: $0, adding: false) }
        }
        router.get("/iid/info/:token") { request, context in
            let token = try pathValue(context, "token")
            return try await authenticator.instanceIDRequest(request) {
                try await info(request, project: $0, token: token)
            }
        }
    }

    // MARK: v1 resource

    private func ownedRegistration(_ request: Request, _ context: HeraldRequestContext) async throws
        -> (Project, Registration)
    {
        let (_, project) = try await authenticator.authorize(
            authorization: request.headers[.authorization],
            projectName: try context.parameters.require("project"))
        let token = try pathValue(context, "token")
        guard RegistrationTokenFormat.isWellFormed(token) else { throw HeraldError.malformedToken(field: "token") }
        guard let registration = try await store.registration(token: token),
            registration.deletedAt == nil
        else { throw HeraldError.notFound("Requested entity was not found.") }
        guard registration.projectID == project.id else {
            throw HeraldError.permissionDenied("The registration belongs to another project.")
        }
        return (project, registration)
    }

    /// SEMANTICS T2 for the v1 resource: one change per request, refused with a 429.
    private func admitOneChange(_ project: Project) throws {
        guard quotas.admitTopicOperations(project, requested: 1, now: clock.now()) == 1 else {
            throw Quotas.topicOperationsExceeded(project)
        }
    }

    private func resource(_ subscription: TopicSubscription) -> JSONValue {
        .stringObject([
            (
                "name",
                "projects/\(subscription.projectID)/registrations/\(subscription.token)/topicSubscriptions/\(subscription.topic)"
            ),
            ("topicName", subscription.topic),
            ("createTime", RFC3339.format(subscription.createdAt)),
        ])
    }

    private func validTopic(_ topic: String) throws -> String {
        guard TopicName.isValid(topic) else {
            throw HeraldError.invalidField(
                "topic_name", "Invalid topic name \"\(topic)\": use 1 to 900 of [a-zA-Z0-9-_.~%].")
        }
        return topic
    }

    /// Subscribes; false when the subscription existed. Throws when the token has too many topics.
    private func subscribe(_ subscription: TopicSubscription) async throws -> Bool {
        do {
            return try await store.subscribe(subscription, limit: Self.topicsPerToken)
        } catch StoreError.limit {
            throw HeraldError(
                status: .failedPrecondition,
                message: "TOO_MANY_TOPICS: an app instance may subscribe to at most \(Self.topicsPerToken) topics.")
        }
    }

    private func pathValue(_ context: HeraldRequestContext, _ name: String) throws -> String {
        let raw = try context.parameters.require(name)
        return FormBody.decode(raw.utf8) ?? raw
    }

    // MARK: Instance ID

    /// `POST /iid/v1:batchAdd` and `:batchRemove`: one result per token, in order.
    private func batch(_ request: Request, project: Project, adding: Bool) async throws -> Response {
        let body = try await request.collectBody()
        guard let json = try? JSONParser.parse(body.readableBytesView), let to = json["to"]?.stringValue,
            let tokens = json["registration_tokens"]?.arrayElements?.compactMap(\.stringValue),
            !tokens.isEmpty, tokens.count <= Self.batchLimit
        else {
            return Response.json(.stringObject([("error", "INVALID_ARGUMENT")]), status: .badRequest)
        }
        let topic = TopicName.stripPrefix(to)
        guard TopicName.isValid(topic) else {
            return Response.json(.stringObject([("error", "INVALID_ARGUMENT")]), status: .badRequest)
        }
        // SEMANTICS T2: the tokens past the project's room this second get RESOURCE_EXHAUSTED.
        let granted = quotas.admitTopicOperations(
            project, requested: tokens.count, now: clock.now())
        var results: [JSONValue] = []
        for (index, token) in tokens.enumerated() {
            guard index < granted else {
                results.append(.stringObject([("error", "RESOURCE_EXHAUSTED")]))
                continue
            }
            results.append(.object(try await batchResult(token: token, topic: topic, project: project, adding: adding)))
        }
        return Response.json(.object([(key: "results", value: .array(results))]))
    }

    private func batchResult(token: String, topic: String, project: Project, adding: Bool) async throws
        -> [(key: String, value: JSONValue)]
    {
        func failure(_ code: String) -> [(key: String, value: JSONValue)] { [(key: "error", value: .string(code))] }
        guard RegistrationTokenFormat.isWellFormed(token) else { return failure("INVALID_ARGUMENT") }
        guard let registration = try await store.registration(token: token),
            registration.deletedAt == nil
        else { return failure("NOT_FOUND") }
        guard registration.projectID == project.id else { return failure("PERMISSION_DENIED") }
        if adding {
            let subscription = TopicSubscription(
                projectID: project.id, token: token, topic: topic, createdAt: clock.now())
            do {
                _ = try await store.subscribe(subscription, limit: Self.topicsPerToken)
            } catch StoreError.limit {
                return failure("TOO_MANY_TOPICS")
            }
        } else {
            _ = try await store.unsubscribe(token: token, topic: topic)
        }
        return []
    }

    /// `GET /iid/info/{token}`: the app instance, and with `details=true` its topics.
    private func info(_ request: Request, project: Project, token: String) async throws -> Response {
        guard RegistrationTokenFormat.isWellFormed(token) else {
            return Response.json(.stringObject([("error", "InvalidToken")]), status: .badRequest)
        }
        guard let registration = try await store.registration(token: token), registration.deletedAt == nil,
            registration.projectID == project.id
        else {
            return Response.json(
                .stringObject([("error", "No information found about this instance id.")]), status: .notFound)
        }
        let platforms: [Platform: String] = [.android: "ANDROID", .apple: "IOS", .web: "WEBPUSH"]
        var body: [(key: String, value: JSONValue)] = [
            (key: "application", value: .string(registration.appID)),
            (key: "authorizedEntity", value: .string(String(project.number))),
            (key: "platform", value: .string(platforms[registration.platform] ?? "ANDROID")),
        ]
        if request.uri.queryParameters.get("details") == "true" {
            let topics = try await store.subscriptions(token: token).map { subscription in
                (
                    key: subscription.topic,
                    value: JSONValue.stringObject([("addDate", CalendarDay(subscription.createdAt).description)])
                )
            }
            body.append((key: "rel", value: .object([(key: "topics", value: .object(topics))])))
        }
        return Response.json(.object(body))
    }
}
