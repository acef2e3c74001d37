import Foundation
import HeraldCore
import HeraldStorage
import Hummingbird

/// What became of a message (SEMANTICS E3), with the credentials of a send:
/// `GET /v1/projects/{p}/messages/{id}` answers its target, state and the counts of each
/// outcome; `GET /v1/projects/{p}/messages/{id}/events` its events, a page at a time.
/// Another project's message is not found.
struct MessageRoutes {
    let authenticator: Authenticator
    let events: any EventStore
    let clock: any HeraldClock
    /// The ids events and page tokens are given.
    let eventIDs: EventIDs

    /// Events a page holds at most, and by default.
    static let maximumPageSize = 1000

    func register(on router: Router<HeraldRequestContext>) {
        router.get("/v1/projects/:project/messages/:message") { request, context in
            let (project, messageID) = try await message(request, context)
            guard let status = try await events.messageStatus(projectID: project.id, messageID: messageID) else {
                throw Self.notFound(messageID)
            }
            return Response.json(
                Self.json(status, name: "projects/\(project.id)/messages/\(messageID)", now: clock.now()))
        }
        router.get("/v1/projects/:project/messages/:message/events") { request, context in
            let (project, messageID) = try await message(request, context)
            let query = request.uri.queryParameters
            let pageSize = min(Self.maximumPageSize, max(1, query.get("pageSize").flatMap { Int($0) } ?? 100))
            var after: Int64 = 0
            if let token = query.get("pageToken"), !token.isEmpty {
                guard let sequence = eventIDs.project(project.id).sequence(of: token) else {
                    throw HeraldError.invalidField("pageToken", "The page token is not valid.")
                }
                after = sequence
            }
            if after == 0, try await events.messageStatus(projectID: project.id, messageID: messageID) == nil {
                throw Self.notFound(messageID)
            }
            // One more than a page tells whether another page follows.
            let found = try await events.events(
                projectID: project.id, after: after, limit: pageSize + 1, filter: EventFilter(messageID: messageID))
            let page = found.prefix(pageSize)
            let ids = eventIDs.project(project.id)
            var body: [(key: String, value: JSONValue)] = [("events", .array(page.map(ids.json)))]
            if found.count > pageSize, let last = page.last {
                body.append(("nextPageToken", .string(ids.id(sequence: last.sequence))))
            }
            return Response.json(.object(body))
        }
    }

    /// The project and message id a request names, once its caller may act on the project.
    private func message(_ request: Request, _ context: HeraldRequestContext) async throws -> (Project, String) {
        let (_, project) = try await authenticator.authorize(
            authorization: request.headers[.authorization], projectName: try context.parameters.require("project"))
        return (project, Self.messageID(path: request.uri.path))
    }

    /// The message id in a path `/v1/projects/{p}/messages/{id}[/events]`. An id holds a `%`
    /// (`0:<time>%<hex>`): a client that escaped it sent `%25`, one that did not sent it as
    /// is, so the id is decoded only when decoding leaves an id's shape.
    static func messageID(path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard let index = parts.firstIndex(of: "messages"), index + 1 < parts.count else { return "" }
        let raw = String(parts[index + 1])
        guard let decoded = raw.removingPercentEncoding, decoded.contains("%") else { return raw }
        return decoded
    }

    static func notFound(_ messageID: String) -> HeraldError {
        .notFound("No message \(messageID) is known to this project: it never was, or its events are past retention.")
    }

    /// A status as the API answers it.
    static func json(_ status: MessageStatus, name: String, now: Timestamp) -> JSONValue {
        let accepted = status.accepted
        var fields: [(key: String, value: JSONValue)] = [
            ("name", .string(name)),
            ("target", .object([("kind", .string(accepted.targetKind)), ("value", .string(accepted.target))])),
            ("analyticsLabel", .string(accepted.analyticsLabel)),
            ("acceptTime", .string(accepted.at.rfc3339)), ("expireTime", .string(accepted.expiresAt.rfc3339)),
            ("state", .string(status.state(now: now).rawValue)),
            ("appInstances", .number(Double(status.instances))), ("waiting", .number(Double(status.waiting))),
            (
                "counts",
                .object(
                    MessageEventType.outcomes.map {
                        ($0.rawValue, .number(Double(status[$0])))
                    })
            ),
        ]
        if let fanout = status.fanout {
            fields.append(
                (
                    "fanout",
                    .object([("reached", .number(Double(fanout.reached))), ("finished", .bool(fanout.finished))])
                ))
        }
        return .object(fields)
    }
}
