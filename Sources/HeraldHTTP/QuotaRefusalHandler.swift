import HTTPTypes
import HeraldCore
import HeraldStorage
public import NIOCore
public import NIOHTTPTypes

/// Answers a send of a project over its downstream quota (SEMANTICS T1) on the event loop
/// that read it, before the request becomes a task: a project driven far past its quota
/// must cost the server as little as possible for each refusal.
///
/// It answers only what it can decide at once: a `POST …/messages:send` of a project that
/// was refused lately, with credentials that need no signature check, and no earlier
/// request of the connection still being answered (the answers must keep their order).
/// The answer is the route's own 429, sent when the request's body is in, so that the
/// connection stays usable. Everything else passes through unchanged, to the router; a send
/// of such a project that fits is passed on as one of the project's sends on their way to
/// the route (`Quotas.passOnDownstream`) until its answer ends, so that the room one send
/// fits in is not found by every send that arrives with it.
public final class QuotaRefusalHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    /// The quota it answers for, with its clock and metrics.
    private let admission: DownstreamAdmission
    private let directory: CredentialDirectory
    private let authenticator: Authenticator
    private let errors: ErrorLog
    /// The refusal to answer once the request's body is in, and its project.
    private var refusal: (error: HeraldError, projectID: String)?
    /// Requests passed on whose answer has not ended.
    private var passedOn = 0
    /// The project of the oldest request passed on, when the quota counts it as on its way
    /// to the route until its answer ends (only a request with none before it is checked).
    private var onItsWay: String?
    /// The last refusal answered and its rendered body and header fields: a project
    /// refused again gets the same answer until its wait or the second changes.
    private var rendered: (error: HeraldError, second: Int64, body: ByteBuffer, fields: HTTPFields)?

    /// The handler for the listeners of `environment`: its quota, credentials and error log.
    public init(environment: HTTPEnvironment) {
        admission = environment.admission
        directory = environment.directory
        authenticator = environment.authenticator
        errors = environment.errors
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if passedOn == 0, let refusal = refusalOrPassingOn(head) {
                self.refusal = refusal
                return
            }
            passedOn += 1
        case .body:
            if refusal != nil { return }
        case .end:
            if let refusal {
                self.refusal = nil
                answer(refusal.error, context: context)
                errors.count(refusal.error, projectID: refusal.projectID, at: admission.clock.now())
                return
            }
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            passedOn -= 1
            endOnItsWay()
        }
        context.write(data, promise: promise)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        endOnItsWay()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        endOnItsWay()
    }

    /// The request on its way to the route was answered, or will never be.
    private func endOnItsWay() {
        guard let project = onItsWay else { return }
        onItsWay = nil
        admission.quotas.endPassedOn(projectID: project)
    }

    /// The quota error of a send the router would refuse with it, and its project, when that
    /// is known now; otherwise nil, and a send checked that fits is marked as on its way to
    /// the route.
    private func refusalOrPassingOn(_ head: HTTPRequest) -> (error: HeraldError, projectID: String)? {
        guard head.method == .post, let projectName = Self.sendProject(head.path),
            head.headerFields[.expect] == nil,
            head.headerFields[.connection]?.lowercased().contains("close") != true
        else { return nil }
        let now = admission.clock.now()
        guard let named = directory.project(named: projectName),
            admission.quotas.isRefusingDownstream(projectID: named.id, now: now),
            let project = authenticator.authorizeWithoutWaiting(
                authorization: head.headerFields[.authorization], projectName: projectName)
        else { return nil }
        if let refusal = admission.quotas.passOnDownstream(project, now: now) { return (refusal, project.id) }
        onItsWay = project.id
        return nil
    }

    /// The send API's path around its project: `/v1/projects/` and `/messages:send`.
    private static let (prefix, suffix) = {
        let parts = SendRoutes.base.split(separator: "{project}", omittingEmptySubsequences: false)
        return (String(parts[0]), String(parts[1]))
    }()

    /// The project a send API path names.
    /// Compared as bytes: `hasPrefix` and `count` on strings work by characters.
    static func sendProject(_ path: String?) -> Substring? {
        guard let path else { return nil }
        let utf8 = path.utf8
        let end = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        let bytes = utf8[..<end]
        guard bytes.count > prefix.utf8.count + suffix.utf8.count, bytes.starts(with: prefix.utf8),
            bytes.reversed().starts(with: suffix.utf8.reversed())
        else { return nil }
        let name = path[
            utf8.index(bytes.startIndex, offsetBy: prefix.utf8.count)..<utf8.index(end, offsetBy: -suffix.utf8.count)]
        return name.utf8.contains(UInt8(ascii: "/")) ? nil : name
    }

    private func answer(_ error: HeraldError, context: ChannelHandlerContext) {
        let (body, fields) = rendering(error, allocator: context.channel.allocator)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: error.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        admission.metrics.countError(error)
        admission.metrics.countAnswer(route: SendRoutes.base, status: error.status)
    }

    /// The body and header fields of the answer to `error`, rendered again only when the
    /// error or the second changed since the last one.
    private func rendering(_ error: HeraldError, allocator: ByteBufferAllocator) -> (ByteBuffer, HTTPFields) {
        let second = admission.clock.now().milliseconds / 1000
        if let rendered, rendered.error == error, rendered.second == second { return (rendered.body, rendered.fields) }
        let body = allocator.buffer(string: error.v1Body.rendered)
        var fields = error.headers
        fields[.contentLength] = String(body.readableBytes)
        fields[.date] = Self.httpDate(secondsSinceEpoch: second)
        fields[.server] = "Herald"
        rendered = (error, second, body, fields)
        return (body, fields)
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), as HTTP's `Date` header wants.
    static func httpDate(secondsSinceEpoch seconds: Int64) -> String {
        let date = CalendarDay(Timestamp(seconds: seconds))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func twoDigits(_ value: some BinaryInteger) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[weekday]), \(twoDigits(date.day)) \(months[date.month - 1]) \(date.year) "
            + "\(twoDigits(time / 3_600)):\(twoDigits(time % 3_600 / 60)):\(twoDigits(time % 60)) GMT"
    }
}

@available(*, unavailable)
extension QuotaRefusalHandler: Sendable {}
