import HTTPTypes
import HeraldCore
import HeraldStorage
import Hummingbird

/// `POST /c2dm/register3` (reference §7): what devices, browsers and the Apple SDK send to
/// get a token, to subscribe a token to a topic, and to delete registrations. The form is
/// read by `Register3Request`; this type checks the device's `AidLogin` and does the
/// store's part. Answers are `token=…`, `deleted=…` or `Error=…` lines.
struct Register3Endpoint {
    let environment: RegistrationEnvironment

    /// `installationAuth` is the `x-goog-firebase-installations-auth` header, which the iOS
    /// SDK sends instead of the form field.
    func handle(_ body: ByteBuffer, authorization: String?, installationAuth: String? = nil, from address: String)
        async throws -> Response
    {
        guard let (androidID, securityToken) = Self.parseAidLogin(authorization),
            let device = try await environment.store.device(androidID: androidID),
            device.securityToken == securityToken
        else { return answer(androidID: nil, "Error=AUTHENTICATION_FAILED", status: .unauthorized) }
        guard environment.deviceRequests.admit(.registration, address),
            environment.deviceRequests.admit(.deviceRegistration, String(androidID))
        else {
            return answer(
                androidID: androidID, "Error=TOO_MANY_REGISTRATIONS", status: .tooManyRequests,
                headers: [.retryAfter: "60"])
        }
        guard body.readableBytes <= Self.maximumBodyBytes, let form = FormBody.parse(body.readableBytesView) else {
            return answer(androidID: androidID, "Error=INVALID_PARAMETERS", status: .badRequest)
        }
        var request: Register3Request
        do {
            request = try Register3Request.parse(form, androidID: androidID)
        } catch {
            return answer(androidID: androidID, "Error=\(error.code)", status: .badRequest)
        }
        if case .register(var registering) = request, registering.installationAuth == nil {
            registering.installationAuth = installationAuth
            request = .register(registering)
        }
        environment.logger.debug(
            "register3 request",
            metadata: ["device": "\(androidID)", "request": "\(Self.described(request))"])
        switch request {
        case .register(let registering):
            return try await register(registering, androidID: androidID)
        case .topic(let change):
            return try await changeTopic(change, androidID: androidID)
        case .unregister(let unregistering):
            return try await unregister(unregistering, androidID: androidID)
        }
    }

    // MARK: Tokens

    private func register(_ registering: Register3Request.Registering, androidID: UInt64) async throws -> Response {
        let now = environment.clock.now()
        // The same request again (an app asking at each start) answers the token it has: a
        // device cannot pile up registrations by repeating itself.
        if let existing = try await environment.store.registrations(androidID: androidID).first(where: {
            $0.deletedAt == nil && $0.appID == registering.app && $0.sender == registering.sender
                && $0.subtype == registering.subtype && $0.platform == registering.platform
                && ($0.kind == .webChannel || $0.installationID == registering.installationID
                    || registering.installationAuth == nil)
        }) {
            return answer(androidID: androidID, "token=\(existing.token)")
        }
        let registration: Registration
        if let number = Int64(registering.sender) {
            guard let project = await environment.directory.find({ $0.project(number: number) }) else {
                return answer(androidID: androidID, "Error=INVALID_SENDER", status: .badRequest)
            }
            // An installation id links the token to the installation, so that `fid` sends reach it.
            var installationID: String?
            if let fid = registering.installationID, let auth = registering.installationAuth,
                let verified = environment.tokens.verifyInstallationToken(auth, now: now),
                verified.projectID == project.id, verified.fid == fid
            {
                installationID = fid
            }
            if let apns = registering.apns {
                // An older iOS SDK: the token stands for the app instance APNs reaches.
                guard APNsCredential.isBundleID(registering.app) else {
                    return answer(androidID: androidID, "Error=INVALID_PARAMETERS", status: .badRequest)
                }
                let apple = try await AppleRegistrationRoutes(environment: environment).register(
                    apns, bundleID: registering.app, installationID: installationID, keys: nil, project: project)
                environment.metrics.increment("herald_registrations_total", [("kind", "ios-register")])
                return answer(androidID: androidID, "token=\(apple.token)")
            }
            registration = Registration(
                token: Registration.makeToken(), kind: .app, projectID: project.id, sender: registering.sender,
                appID: registering.app, subtype: registering.subtype, platform: registering.platform,
                androidID: androidID, installationID: installationID, createdAt: now)
        } else {
            registration = Registration(
                token: Registration.makeToken(), kind: .webChannel, projectID: nil, sender: registering.sender,
                appID: registering.app, subtype: registering.subtype, platform: .web, androidID: androidID,
                createdAt: now)
        }
        try await environment.store.createRegistration(registration)
        environment.metrics.increment("herald_registrations_total", [("kind", registration.kind.rawValue)])
        return answer(androidID: androidID, "token=\(registration.token)")
    }

    /// `register3` with `delete=true`: an app deleted its token or was uninstalled
    /// (SEMANTICS L6), or a browser unsubscribed one site. Deletes only the matching
    /// registrations (a web push channel together with the web registrations built on it,
    /// which share its app, subtype and sender), and succeeds when nothing matches, so that a
    /// repeated request succeeds again.
    private func unregister(_ unregistering: Register3Request.Unregistering, androidID: UInt64) async throws
        -> Response
    {
        let now = environment.clock.now()
        let targets = try await environment.store.registrations(androidID: androidID).filter(unregistering.matches)
        for registration in targets {
            _ = try await environment.store.deleteRegistration(token: registration.token, at: now)
        }
        environment.logger.info(
            "unregistered", metadata: ["device": "\(androidID)", "registrations": "\(targets.count)"])
        return answer(androidID: androidID, unregistering.answer)
    }

    // MARK: Topics

    /// Subscribes the device's own token to a topic or unsubscribes it (SEMANTICS T2 and the
    /// topics-per-instance limit apply as for the Instance ID API); the token stays registered.
    private func changeTopic(_ change: Register3Request.TopicChange, androidID: UInt64) async throws -> Response {
        guard let registration = try await environment.store.registration(token: change.token),
            registration.deletedAt == nil, registration.kind == .app, registration.androidID == androidID,
            registration.appID == change.app, let projectID = registration.projectID,
            let project = await environment.directory.find({ $0.project(named: projectID) })
        else { return answer(androidID: androidID, "Error=INVALID_SENDER", status: .badRequest) }
        let now = environment.clock.now()
        guard environment.quotas.admitTopicOperations(project, requested: 1, now: now) == 1 else {
            return answer(
                androidID: androidID, "Error=QUOTA_EXCEEDED", status: .tooManyRequests, headers: [.retryAfter: "1"])
        }
        if change.subscribing {
            let subscription = TopicSubscription(
                projectID: project.id, token: change.token, topic: change.topic, createdAt: now)
            do {
                _ = try await environment.store.subscribe(subscription, limit: TopicRoutes.topicsPerToken)
            } catch StoreError.limit {
                return answer(androidID: androidID, "Error=TOO_MANY_TOPICS", status: .badRequest)
            }
        } else {
            _ = try await environment.store.unsubscribe(token: change.token, topic: change.topic)
        }
        return answer(androidID: androidID, "token=\(change.token)")
    }

    // MARK: Wire

    /// The largest form accepted: every field at its limit fits many times over.
    static let maximumBodyBytes = 16_384

    static func parseAidLogin(_ authorization: String?) -> (UInt64, UInt64)? {
        guard let authorization, authorization.hasPrefix("AidLogin ") else { return nil }
        let parts = authorization.dropFirst("AidLogin ".count).split(separator: ":")
        guard parts.count == 2, let id = UInt64(parts[0]), let token = UInt64(parts[1]) else { return nil }
        return (id, token)
    }

    private func answer(
        androidID: UInt64?, _ line: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) -> Response {
        environment.logger.debug(
            "register3 answer",
            metadata: [
                "device": "\(androidID.map(String.init) ?? "-")", "status": "\(status.code)",
                "answer": "\(Self.shortened(line))",
            ])
        var headers = headers
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: line)))
    }

    /// An answer line with any token in it shortened, for the log.
    static func shortened(_ line: String) -> String {
        guard line.hasPrefix("token=") else { return line }
        return "token=" + Registration.redacted(String(line.dropFirst("token=".count)))
    }

    /// A request as the log shows it: no whole token.
    static func described(_ request: Register3Request) -> String {
        switch request {
        case .register(let registering):
            return "register app=\(registering.app) subtype=\(registering.subtype ?? "-")"
        case .topic(let change):
            return "\(change.subscribing ? "subscribe" : "unsubscribe") token=\(Registration.redacted(change.token)) "
                + "topic=\(change.topic)"
        case .unregister(let unregistering):
            return "delete app=\(unregistering.app) subtype=\(unregistering.subtype ?? "*") "
                + "sender=\(unregistering.sender ?? "*")"
        }
    }
}
