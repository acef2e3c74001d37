import HTTPTypes
import HeraldCore
import HeraldStorage
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /v1/projects/{p}/events:stream`: a project's events as Server-Sent Events, live,
/// with the credentials of a send (SEMANTICS E4). Each event's SSE id is its id
/// (`EventIDs`): a client that reconnects with `Last-Event-ID` gets exactly the events
/// after it that are still kept. Filters: `message_id`, `analytics_label`, and `type` (a type, or
/// several comma-separated). Without `Last-Event-ID` the stream starts at the newest event.
struct EventStreamRoutes {
    let authenticator: Authenticator
    let events: any EventStore
    /// The node's one reader of new events, which every stream takes its project's from.
    let tail: EventTail
    /// Streams open at once on the node, per project and per credential (SEMANTICS E4).
    let streams: EventStreamSlots
    /// The ids events are given, and `Last-Event-ID` is read with.
    let eventIDs: EventIDs

    /// How long a quiet stream waits before a comment line keeps its connection (and
    /// proxies) from timing out. Its client leaving and the node stopping end the wait.
    static let keepAliveInterval: Duration = .seconds(15)
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    /// Events read from the store at once.
    static let batch = 500

    func register(on router: Router<HeraldRequestContext>) {
        router.get("/v1/projects/:project/events:stream") { request, context in
            let (caller, project) = try await authenticator.authorize(
                authorization: request.headers[.authorization], projectName: try context.parameters.require("project"))
            let filter = try Self.filter(request)
            let ids = eventIDs.project(project.id)
            let resumeFrom =
                request.headers[Self.lastEventID] ?? request.uri.queryParameters.get("last_event_id")
            let first: Int64
            if let resumeFrom, !resumeFrom.isEmpty {
                guard let sequence = ids.sequence(of: resumeFrom) else {
                    throw HeraldError.invalidArgument("Last-Event-ID is not an event id of this stream.")
                }
                first = sequence
            } else {
                first = try await events.latestEventSequence()
            }
            let slot = try Self.slot(streams, holder: .init(projectID: project.id, keyID: caller.keyID))
            // The slot is given back as soon as the connection closes, not at the next write,
            // and the stream's wait ends.
            let channel = context.channel
            channel.closeFuture.whenComplete { _ in slot.release() }
            let subscription = try await tail.subscribe(projectID: project.id)
            channel.closeFuture.whenComplete { _ in subscription.leave() }
            let events = events
            let projectID = project.id
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    defer {
                        slot.release()
                        subscription.leave()
                    }
                    try await writer.write(ByteBuffer(string: ": \(projectID) events\n\n"))
                    var start = first
                    // What the tail does not hand the stream (before it joined, or while the
                    // stream was too far behind) is read from the store, a page at a time.
                    var through = subscription.joinedThrough
                    // The stream ends when the client goes or the server shuts down.
                    try await withGracefulShutdownHandler {
                        while !Task.isCancelled, channel.isActive {
                            if start < through {
                                let page = try await events.events(
                                    projectID: projectID, after: start, limit: Self.batch, filter: filter)
                                let mine = page.prefix { $0.sequence <= through }
                                if !mine.isEmpty { try await writer.write(Self.frames(mine, ids: ids)) }
                                start =
                                    page.count == Self.batch && mine.count == page.count
                                    ? page[page.count - 1].sequence : through
                                continue
                            }
                            switch await subscription.next(upTo: Self.keepAliveInterval) {
                            case .events(let found):
                                let mine = found.filter { $0.sequence > start && filter.admits($0) }
                                if !mine.isEmpty { try await writer.write(Self.frames(mine, ids: ids)) }
                                start = max(start, found[found.count - 1].sequence)
                                through = start
                            case .behind(let missed):
                                through = missed
                            case .quiet:
                                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                            case .ended:
                                return
                            }
                        }
                    } onGracefulShutdown: {
                        subscription.leave()
                    }
                    try await writer.finish(nil)
                })
        }
    }

    /// A stream's slot, or the refusal: 429 `RESOURCE_EXHAUSTED` past the project's or the
    /// credential's streams, 503 past the node's.
    static func slot(_ streams: EventStreamSlots, holder: EventStreamAllowance.Holder) throws(HeraldError)
        -> EventStreamSlots.Slot
    {
        switch streams.take(for: holder) {
        case .success(let slot):
            return slot
        case .failure(.credential):
            throw HeraldError.quotaExceeded(
                subject: "event streams", retryAfterSeconds: 5,
                message: "Too many event streams are open with this service-account key.")
        case .failure(.project):
            throw HeraldError.quotaExceeded(
                subject: "event streams", retryAfterSeconds: 5,
                message: "Too many event streams are open for this project.")
        case .failure(.node):
            throw HeraldError.unavailable(retryAfterSeconds: 5, "Too many event streams are open on this node.")
        }
    }

    /// Events as SSE frames, in one buffer.
    static func frames(_ events: some Collection<MessageEvent>, ids: EventIDs.Project) -> ByteBuffer {
        ByteBuffer(string: events.map { frame($0, ids: ids) }.joined())
    }

    /// One event as an SSE frame: its id, its type as the SSE event name, and its JSON.
    static func frame(_ event: MessageEvent, ids: EventIDs.Project) -> String {
        let id = ids.id(sequence: event.sequence)
        return "id: \(id)\nevent: \(event.type.rawValue)\ndata: \(event.json(id: id).rendered)\n\n"
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
