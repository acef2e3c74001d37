import HTTPTypes
import HeraldCore
import HeraldStorage
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /v1/projects/{p}/events:stream`: a project's events as Server-Sent Events, live,
/// with the credentials of a send (SEMANTICS E4). Each event's SSE id is its sequence
/// number: a client that reconnects with `Last-Event-ID` gets exactly the events after it
/// that are still kept. Filters: `message_id`, `analytics_label`, and `type` (a type, or
/// several comma-separated). Without `Last-Event-ID` the stream starts at the newest event.
struct EventStreamRoutes {
    let authenticator: Authenticator
    let events: any EventStore
    let clock: any HeraldClock
    /// Streams open at once on this node; past it, a new one is refused with 503.
    let streams: ConcurrencyGate

    /// How often the store is asked for new events, and how long a quiet stream waits
    /// before a comment line keeps its connection (and proxies) from timing out.
    static let pollInterval: Duration = .milliseconds(200)
    static let keepAliveInterval: Duration = .seconds(15)
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    /// Events read from the store at once.
    static let batch = 500

    func register(on router: Router<HeraldRequestContext>) {
        router.get("/v1/projects/:project/events:stream") { request, context in
            let (_, project) = try await authenticator.authorize(
                authorization: request.headers[.authorization], projectName: try context.parameters.require("project"))
            let filter = try Self.filter(request)
            let resumeFrom =
                request.headers[Self.lastEventID] ?? request.uri.queryParameters.get("last_event_id")
            let first: Int64
            if let resumeFrom, !resumeFrom.isEmpty {
                guard let sequence = Int64(resumeFrom), sequence >= 0 else {
                    throw HeraldError.invalidArgument("Last-Event-ID is not an event id of this stream.")
                }
                first = sequence
            } else {
                first = try await events.latestEventSequence()
            }
            guard streams.enter() else {
                throw HeraldError.unavailable(retryAfterSeconds: 5, "Too many event streams are open on this node.")
            }
            let (events, streams, clock) = (events, streams, clock)
            let projectID = project.id
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    defer { streams.leave() }
                    var start = first
                    // The stream ends when the client goes (a write fails) or the server shuts down.
                    try await writer.write(ByteBuffer(string: ": \(projectID) events after \(start)\n\n"))
                    var quiet: Duration = .zero
                    while !Task.isCancelled, !Task.isShuttingDownGracefully {
                        let found = try await events.settledEvents(
                            projectID: projectID, after: start, limit: Self.batch, filter: filter, now: clock.now())
                        if let last = found.last {
                            start = last.sequence
                            try await writer.write(ByteBuffer(string: found.map(Self.frame).joined()))
                            quiet = .zero
                            if found.count == Self.batch { continue }
                        } else if quiet >= Self.keepAliveInterval {
                            try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                            quiet = .zero
                        }
                        try? await Task.sleep(for: Self.pollInterval)
                        quiet += Self.pollInterval
                    }
                    try await writer.finish(nil)
                })
        }
    }

    /// One event as an SSE frame: its id, its type as the SSE event name, and its JSON.
    static func frame(_ event: MessageEvent) -> String {
        "id: \(event.id)\nevent: \(event.type.rawValue)\ndata: \(event.json.rendered)\n\n"
    }

    /// The filter a stream request's query names; throws `INVALID_ARGUMENT` for an unknown type.
    static func filter(_ request: Request) throws -> EventFilter {
        let query = request.uri.queryParameters
        var filter = EventFilter(messageID: query.get("message_id"), analyticsLabel: query.get("analytics_label"))
        for name in query.getAll("type").flatMap({ $0.split(separator: ",") }) {
            guard let type = MessageEventType(rawValue: String(name)) else {
                throw HeraldError.invalidArgument(
                    "Unknown event type \(name); known: \(MessageEventType.allCases.map(\.rawValue).joined(separator: ", "))."
                )
            }
            filter.types.insert(type)
        }
        return filter
    }
}
