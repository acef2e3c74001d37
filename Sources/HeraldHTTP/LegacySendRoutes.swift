import HTTPTypes
import HeraldCore
import Hummingbird

/// `POST /fcm/send` and `/gcm/send`: the legacy HTTP protocol (reference §5), authorised by
/// the project's server key (SEMANTICS C5). Each target becomes a v1 message handed to the
/// same dispatcher as a v1 send, so it is the same accepted message under the same rules;
/// only the answer is the legacy one. Errors of the request itself are plain text, as FCM
/// gave them: 400 with the reason, 401, and 429 or 5xx with `Retry-After`.
struct LegacySendRoutes {
    let environment: SendEnvironment
    /// The most tokens of one request sent to at once.
    static let concurrentSends = 16

    func register(on router: Router<HeraldRequestContext>) {
        router.post("/fcm/send") { request, _ in await answer(request) }
        router.post("/gcm/send") { request, _ in await answer(request) }
    }

    private func answer(_ request: Request) async -> Response {
        do {
            return try await send(request)
        } catch let error as HeraldError {
            return Self.failure(error)
        } catch {
            environment.logger.error("legacy send failed", metadata: ["error": "\(error)"])
            return Self.text("InternalServerError", status: .internalServerError, retryAfter: 1)
        }
    }

    private func send(_ request: Request) async throws -> Response {
        let project = try await environment.authenticator.legacyProject(
            authorization: request.headers[.authorization])
        let body = try await request.collectBody()
        let isForm =
            request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false
        let legacy: LegacySendRequest
        do {
            if isForm {
                guard let fields = FormBody.parse(body.readableBytesView) else {
                    return Self.text("The form body is not valid percent-encoding.", status: .badRequest)
                }
                legacy = try LegacySendRequest.decode(form: fields)
            } else {
                legacy = try LegacySendRequest.decode(json: body.readableBytesView)
            }
        } catch {
            return Self.text(error.description, status: .badRequest)
        }
        var count = 1
        if case .registrations(let tokens) = legacy.audience { count = tokens.count }
        let answer = try await environment.admission.admitting(project, count: count, surface: "legacy") {
            try await dispatch(legacy, project: project)
        }
        environment.metrics.increment("herald_legacy_sends_total", [("project", project.id)])
        return isForm ? Self.text(answer.plainText) : Response.json(answer.json)
    }

    private func dispatch(_ legacy: LegacySendRequest, project: Project) async throws -> LegacySendAnswer {
        switch legacy.audience {
        case .missing:
            return .registrations(multicastID: LegacySendAnswer.makeMulticastID(), [.failed("MissingRegistration")])
        case .topic(let name):
            return .topic(await result(legacy, to: ("topic", name), project: project))
        case .condition(let condition):
            return .topic(await result(legacy, to: ("condition", condition), project: project))
        case .registrations(let tokens):
            if tokens.count == 1, DeviceGroup.mayBeKey(tokens[0]),
                let group = try await environment.groups.deviceGroup(
                    projectID: project.id, name: nil, notificationKey: tokens[0])
            {
                guard case .sent = await result(legacy, to: ("token", tokens[0]), project: project) else {
                    return .group(success: 0, failedTokens: group.members)
                }
                return .group(success: group.members.count, failedTokens: [])
            }
            return .registrations(
                multicastID: LegacySendAnswer.makeMulticastID(), await results(legacy, tokens: tokens, project: project)
            )
        }
    }

    /// One result per token, in order, at most `concurrentSends` sent at once. The message
    /// is validated once; each token then only has its shape checked.
    private func results(_ legacy: LegacySendRequest, tokens: [String], project: Project) async
        -> [LegacySendAnswer.Result]
    {
        let template: Message
        do {
            template = try legacy.message(
                to: ("token", LegacySendRequest.placeholderToken), limits: project.settings.message)
        } catch {
            return tokens.map { _ in .failed(error.legacyResult) }
        }
        var results = [LegacySendAnswer.Result](repeating: .failed("InternalServerError"), count: tokens.count)
        await withTaskGroup(of: (Int, LegacySendAnswer.Result).self) { group in
            var next = 0
            func startNext() {
                guard next < tokens.count else { return }
                let index = next
                next += 1
                group.addTask {
                    guard RegistrationTokenFormat.isWellFormed(tokens[index]) else {
                        return (index, .failed(HeraldError.malformedToken(field: "to").legacyResult))
                    }
                    let message = Message(target: .token(tokens[index]), body: template.body)
                    return (index, await sent(message, dryRun: legacy.dryRun, project: project))
                }
            }
            for _ in 0..<Self.concurrentSends { startNext() }
            for await (index, result) in group {
                results[index] = result
                startNext()
            }
        }
        return results
    }

    /// The v1 message to one target, sent; an error is named as the legacy protocol names it.
    private func result(_ legacy: LegacySendRequest, to target: (field: String, value: String), project: Project)
        async -> LegacySendAnswer.Result
    {
        do {
            return await sent(
                try legacy.message(to: target, limits: project.settings.message), dryRun: legacy.dryRun,
                project: project)
        } catch {
            return .failed(error.legacyResult)
        }
    }

    /// A validated message handed to the dispatcher; an error is named as the legacy protocol names it.
    private func sent(_ message: Message, dryRun: Bool, project: Project) async -> LegacySendAnswer.Result {
        do {
            let id = try await environment.dispatcher.send(
                SendRequest(message: message, validateOnly: dryRun), project: project)
            return .sent(messageID: id)
        } catch let error as HeraldError {
            return .failed(error.legacyResult)
        } catch {
            environment.logger.error("legacy send to one target failed", metadata: ["error": "\(error)"])
            return .failed("InternalServerError")
        }
    }

    /// A request-level failure as FCM's legacy endpoint answered it: plain text.
    static func failure(_ error: HeraldError) -> Response {
        switch error.canonicalStatus.httpStatus {
        case 401, 403:
            return text("Unauthorized: \(error.message)", status: .unauthorized)
        case 429:
            return text(
                "QuotaExceeded: \(error.message)", status: .tooManyRequests, retryAfter: error.retryAfterSeconds ?? 60)
        case 500...:
            return text(
                error.legacyResult, status: HTTPResponse.Status(code: error.canonicalStatus.httpStatus),
                retryAfter: error.retryAfterSeconds ?? 1)
        default:
            return text(error.message, status: .badRequest)
        }
    }

    static func text(_ text: String, status: HTTPResponse.Status = .ok, retryAfter: Int? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=UTF-8"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
