import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldProtocol
import Hummingbird
import SwiftProtobuf

/// The endpoints app instances register through (reference §7): device check-in,
/// `register3` (`Register3Endpoint`), Firebase Installations and FCM web registrations.
struct DeviceRegistrationRoutes {
    let environment: RegistrationEnvironment

    func register(on router: Router<HeraldRequestContext>) {
        router.post("/checkin") { request, context in
            try await checkin(try await request.collectBody(), from: context.sourceAddress)
        }
        router.post("/c2dm/register3") { request, context in try await register3(request, context) }
        // Where the Firebase iOS SDK fetches tokens (fcmtoken.googleapis.com).
        router.post("/register") { request, context in try await register3(request, context) }
        router.post("/v1/projects/:project/installations") { request, context in
            let project = try await requireAPIKey(request, projectName: try context.parameters.require("project"))
            try admitRegistration(from: context.sourceAddress)
            return try await createInstallation(try await request.collectBody(), project: project)
        }
        router.post("/v1/projects/:project/installations/:fid/authTokens:generate") { request, context in
            let project = try await requireAPIKey(request, projectName: try context.parameters.require("project"))
            return try await refreshInstallationToken(
                fid: try context.parameters.require("fid"), authorization: request.headers[.authorization],
                project: project)
        }
        // The router takes the path with or without its trailing slash.
        router.post("/fcm/connect/subscribe") { request, context in
            try admitRegistration(from: context.sourceAddress)
            return try await legacyWebSubscription(
                try await request.collectBody(), authorization: request.headers[.authorization])
        }
        router.post("/v1/projects/:project/registrations") { request, context in
            let project = try await requireAPIKey(request, projectName: try context.parameters.require("project"))
            try admitRegistration(from: context.sourceAddress)
            return try await createWebRegistration(
                try await request.collectBody(), project: project,
                installationAuth: request.headers[HTTPField.Name("x-goog-firebase-installations-auth")!],
                authorization: request.headers[.authorization])
        }
    }

    /// `register3`'s form, as Android devices, browsers and the iOS SDK send it.
    private func register3(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        try await Register3Endpoint(environment: environment).handle(
            try await request.collectBody(), authorization: request.headers[.authorization],
            installationAuth: request.headers[HTTPField.Name("x-goog-firebase-installations-auth")!],
            from: context.sourceAddress)
    }

    /// Counts a registration from `address`; throws `RESOURCE_EXHAUSTED` past its allowance.
    private func admitRegistration(from address: String) throws {
        guard environment.deviceRequests.admit(.registration, address) else {
            throw HeraldError.quotaExceeded(
                subject: "registrations-per-address", retryAfterSeconds: 60,
                message: "Too many registrations from this address; try again later.")
        }
    }

    // MARK: Check-in

    /// The largest check-in accepted: FCM's clients send a few hundred bytes.
    static let maximumCheckinBytes = 16_384

    /// A first check-in gets a new android id and security token (at most
    /// `DeviceRequestLimiter.Limits.checkinsPerAddress` a minute from one address); a later
    /// one that presents both keeps them.
    func checkin(_ body: ByteBuffer, from address: String) async throws -> Response {
        guard body.readableBytes <= Self.maximumCheckinBytes else {
            return Response(status: .badRequest, body: ResponseBody(byteBuffer: ByteBuffer(string: "Bad Request")))
        }
        // The Firebase iOS SDK checks in with JSON; Android and Chromium with a protobuf.
        if body.readableBytesView.first == UInt8(ascii: "{") { return try await jsonCheckin(body, from: address) }
        guard let checkin = try? CheckinProto_AndroidCheckinRequest(serializedBytes: Array(body.readableBytesView))
        else {
            return Response(status: .badRequest, body: ResponseBody(byteBuffer: ByteBuffer(string: "Bad Request")))
        }
        let device: Device
        switch try await checkedIn(
            id: checkin.hasID ? UInt64(bitPattern: checkin.id) : 0,
            securityToken: checkin.hasSecurityToken ? checkin.securityToken : 0, from: address)
        {
        case .success(let known): device = known
        case .failure(let refusal): return refusal.response
        }
        var response = CheckinProto_AndroidCheckinResponse()
        response.statsOk = true
        response.timeMsec = environment.clock.now().milliseconds
        response.androidID = device.androidID
        response.securityToken = device.securityToken
        response.settingsDiff = false
        response.versionInfo = "herald"
        return Response(
            status: .ok, headers: [.contentType: "application/x-protobuf"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try response.serializedBytes() as [UInt8])))
    }

    /// The Firebase iOS SDK's check-in (`FIRMessagingCheckinService`): `{"id",
    /// "security_token", "checkin": {…}}` in, `{"android_id", "security_token",
    /// "time_msec", …}` out. Its ids are JSON numbers the SDK reads back as signed 64-bit
    /// integers, so a new device's security token stays below 2^63.
    func jsonCheckin(_ body: ByteBuffer, from address: String) async throws -> Response {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else {
            return Response(status: .badRequest, body: ResponseBody(byteBuffer: ByteBuffer(string: "Bad Request")))
        }
        let device: Device
        switch try await checkedIn(
            id: (object["id"] as? NSNumber)?.uint64Value ?? 0,
            securityToken: (object["security_token"] as? NSNumber)?.uint64Value ?? 0, from: address,
            signedToken: true)
        {
        case .success(let known): device = known
        case .failure(let refusal): return refusal.response
        }
        let answer = """
            {"stats_ok":true,"time_msec":\(environment.clock.now().milliseconds),"android_id":\(device.androidID),\
            "security_token":\(device.securityToken),"version_info":"herald","digest":"","setting":[]}
            """
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    /// Why a check-in is refused, with the answer it gets.
    struct CheckinRefusal: Error {
        var response: Response
    }

    /// The device a check-in is for: a known one when it presents its id and security
    /// token (at most `DeviceRequestLimiter.Limits.recheckinsPerDevice` a minute), else a new
    /// one (at most `checkinsPerAddress` a minute from one address); `signedToken` keeps a
    /// new device's security token below 2^63.
    private func checkedIn(id: UInt64, securityToken: UInt64, from address: String, signedToken: Bool = false)
        async throws -> Result<Device, CheckinRefusal>
    {
        func refusal(_ status: HTTPResponse.Status, _ text: String, _ headers: HTTPFields = [:])
            -> Result<Device, CheckinRefusal>
        {
            .failure(
                CheckinRefusal(
                    response: Response(
                        status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))))
        }
        let now = environment.clock.now()
        let device: Device
        if id != 0, securityToken != 0 {
            guard let known = try await environment.store.device(androidID: id), known.securityToken == securityToken
            else { return refusal(.unauthorized, "Unauthorized") }
            guard environment.deviceRequests.admit(.recheckin, String(known.androidID)) else {
                return refusal(.tooManyRequests, "Too Many Requests", [.retryAfter: "60"])
            }
            device = known
        } else {
            guard environment.deviceRequests.admit(.checkin, address) else {
                return refusal(.tooManyRequests, "Too Many Requests", [.retryAfter: "60"])
            }
            var made = Device.make(at: now)
            if signedToken { made.securityToken = made.securityToken & UInt64(Int64.max) | 1 }
            device = made
            try await environment.store.createDevice(device)
            environment.metrics.increment("herald_devices_checked_in_total")
        }
        // A device checks in again at every start: only new devices are worth a line at info.
        environment.logger.log(
            level: device.createdAt == now ? .info : .debug, "device checked in",
            metadata: ["device": "\(device.androidID)"])
        return .success(device)
    }

    // MARK: Firebase Installations

    /// The project a URL names, when the request presents its API key. A project or key the
    /// directory does not know yet (created a moment ago) is looked for in the store.
    private func requireAPIKey(_ request: Request, projectName: String) async throws -> Project {
        let presented = request.headers[HTTPField.Name("x-goog-api-key")!] ?? request.uri.queryParameters.get("key")
        let project = await environment.directory.find { directory in
            directory.project(named: projectName).flatMap { $0.apiKey == presented ? $0 : nil }
        }
        guard let project else {
            throw HeraldError(status: .invalidArgument, message: "API key not valid. Please pass a valid API key.")
        }
        return project
    }

    /// The largest installation request accepted: the SDKs send a few hundred bytes.
    static let maximumInstallationBytes = 4_096
    /// The longest app id accepted: FCM's are `1:<project number>:<platform>:<hex id>`.
    static let maximumAppIDBytes = 128

    func createInstallation(_ body: ByteBuffer, project: Project) async throws -> Response {
        guard body.readableBytes <= Self.maximumInstallationBytes else {
            throw HeraldError.invalidArgument("The request is larger than \(Self.maximumInstallationBytes) bytes.")
        }
        let json = try parseJSONBody(body)
        guard let appID = json["appId"]?.stringValue, !appID.isEmpty else {
            throw HeraldError.invalidField("appId", "appId is required.")
        }
        guard appID.utf8.count <= Self.maximumAppIDBytes,
            appID.utf8.allSatisfy({
                Base64URL.isAlphabet($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
            })
        else {
            throw HeraldError.invalidField(
                "appId",
                "appId must be an app id such as 1:<project number>:android:<id>, at most "
                    + "\(Self.maximumAppIDBytes) characters.")
        }
        let proposed = json["fid"]?.stringValue ?? ""
        let valid =
            (16...64).contains(proposed.utf8.count)
            && proposed.utf8.allSatisfy {
                Base64URL.isAlphabet($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/")
                    || $0 == UInt8(ascii: "=")
            }
        let now = environment.clock.now()
        // An existing installation is never replaced: a proposed id that is malformed or
        // taken gets a fresh one, as Firebase Installations answers, so knowing another app
        // instance's FID and the public API key gives no hold on it.
        var installation = Installation(
            fid: valid ? proposed : SecureRandom.token(bytes: 16), projectID: project.id, appID: appID,
            refreshToken: "3_" + SecureRandom.token(bytes: 32), createdAt: now)
        while try await !environment.store.createInstallation(installation) {
            installation.fid = SecureRandom.token(bytes: 16)
        }
        let fid = installation.fid
        return Response.json(
            .object([
                (key: "name", value: .string("projects/\(project.number)/installations/\(fid)")),
                (key: "fid", value: .string(fid)),
                (key: "refreshToken", value: .string(installation.refreshToken)),
                (key: "authToken", value: authTokenJSON(project: project, fid: fid, now: now)),
            ]))
    }

    func refreshInstallationToken(fid: String, authorization: String?, project: Project) async throws -> Response {
        let presented = authorization.map { $0.hasPrefix("FIS_v2 ") ? String($0.dropFirst(7)) : $0 }
        guard let installation = try await environment.store.installation(fid: fid, projectID: project.id),
            presented == installation.refreshToken
        else { throw HeraldError.unauthenticated("The refresh token is not valid for this installation.") }
        return Response.json(authTokenJSON(project: project, fid: fid, now: environment.clock.now()))
    }

    private func authTokenJSON(project: Project, fid: String, now: Timestamp) -> JSONValue {
        .object([
            (
                key: "token",
                value: .string(environment.tokens.issueInstallationToken(projectID: project.id, fid: fid, now: now))
            ),
            (key: "expiresIn", value: .string("\(AccessTokens.installationLifetimeSeconds)s")),
        ])
    }

    // MARK: FCM web registrations

    /// Makes a web app token for an installation: the push channel named by `endpoint`
    /// carries it, and its messages are encrypted for `p256dh` and `auth`.
    func createWebRegistration(
        _ body: ByteBuffer, project: Project, installationAuth: String?, authorization: String? = nil
    ) async throws -> Response {
        let now = environment.clock.now()
        guard let installationAuth,
            let (projectID, fid) = environment.tokens.verifyInstallationToken(installationAuth, now: now),
            projectID == project.id
        else { throw HeraldError.unauthenticated("A valid Firebase installation auth token is required.") }
        let json = try parseJSONBody(body)
        if let ios = json["ios"] {
            return try await createAppleRegistration(ios, project: project, installationID: fid)
        }
        guard let web = json["web"] else {
            throw HeraldError.invalidField("web.endpoint", "The endpoint does not name a push channel of this server.")
        }
        let registration = try await createWebRegistration(
            project: project, installationID: fid,
            endpoint: (web["endpoint"]?.stringValue, "web.endpoint"),
            p256dh: (web["p256dh"]?.stringValue, "web.p256dh"),
            auth: (web["auth"]?.stringValue, "web.auth"),
            coding: (web["contentEncoding"]?.stringValue ?? "aesgcm", "web.contentEncoding"),
            applicationPubKey: web["applicationPubKey"]?.stringValue, authorization: authorization)
        environment.metrics.increment("herald_registrations_total", [("kind", "web")])
        return Response.json(
            .object([
                (key: "name", value: .string("projects/\(project.id)/registrations/\(registration.token)")),
                (key: "token", value: .string(registration.token)),
                (key: "web", value: web),
            ]))
    }

    /// The Firebase iOS SDK's registration of its installation: `ios` holds the APNs token,
    /// its environment and the bundle id; the answer names the registration by the
    /// installation id, which sends may target (`fid`), and gives its token too.
    private func createAppleRegistration(_ ios: JSONValue, project: Project, installationID: String) async throws
        -> Response
    {
        let sandbox: Bool
        switch ios["apns_environment"]?.stringValue {
        case "SANDBOX": sandbox = true
        case "PROD", nil: sandbox = false
        default: throw HeraldError.invalidField("ios.apns_environment", "apns_environment must be SANDBOX or PROD.")
        }
        guard let address = ios["apns_token"]?.stringValue.flatMap({ APNsAddress(deviceToken: $0, isSandbox: sandbox) })
        else {
            throw HeraldError.invalidField("ios.apns_token", "apns_token must be an APNs device token in hexadecimal.")
        }
        guard let bundleID = ios["bundle_id"]?.stringValue, APNsCredential.isBundleID(bundleID) else {
            throw HeraldError.invalidField("ios.bundle_id", "bundle_id must be the app's bundle id.")
        }
        // A Herald extension: an app instance that gives keys has its messages sealed for
        // them inside the APNs payload (SEMANTICS A5).
        var keys: WebPushKeys?
        if ios["p256dh"] != nil || ios["auth"] != nil {
            keys = try webPushKeys(
                p256dh: (ios["p256dh"]?.stringValue, "ios.p256dh"), auth: (ios["auth"]?.stringValue, "ios.auth"),
                coding: ("aes128gcm", "ios.p256dh"))
        }
        let registration = try await AppleRegistrationRoutes(environment: environment).register(
            address, bundleID: bundleID, installationID: installationID, keys: keys, project: project)
        environment.metrics.increment("herald_registrations_total", [("kind", "ios")])
        return Response.json(
            .stringObject([
                ("name", "projects/\(project.id)/registrations/\(installationID)"), ("token", registration.token),
            ]))
    }

    /// Makes a web app token whose messages ride the push channel `endpoint` names and are
    /// encrypted for `p256dh` and `auth`; each argument comes with the field name its error names.
    /// The project must be one the channel may carry (`WebChannelBinding`); `authorization`
    /// may prove the caller is the channel's device (`AidLogin`). An endpoint at a browser's
    /// own push service makes a token whose messages are handed there (SEMANTICS W1).
    private func createWebRegistration(
        project: Project, installationID: String?, endpoint: (String?, String), p256dh: (String?, String),
        auth: (String?, String), coding: (String, String), applicationPubKey: String? = nil, authorization: String?
    ) async throws -> Registration {
        let channelToken = endpoint.0?.split(separator: "/").last.map(String.init)
        guard let channelToken, let channel = try await environment.store.registration(token: channelToken),
            channel.kind == .webChannel, channel.deletedAt == nil
        else {
            if let address = endpoint.0, environment.webPushServices.host(of: address) != nil {
                return try await createHandedOffWebRegistration(
                    project: project, installationID: installationID, endpoint: (address, endpoint.1),
                    keys: try webPushKeys(p256dh: p256dh, auth: auth, coding: ("aes128gcm", coding.1)),
                    applicationPubKey: applicationPubKey)
            }
            throw HeraldError.invalidField(
                endpoint.1,
                "The endpoint does not name a push channel of this server or a browser push service it knows.")
        }
        try await checkBinding(
            of: channel, to: project, applicationPubKey: applicationPubKey, authorization: authorization)
        let registration = Registration(
            token: Registration.makeToken(), kind: .app, projectID: project.id, sender: channel.sender,
            appID: channel.appID, subtype: channel.subtype, platform: .web, androidID: channel.androidID,
            installationID: installationID, webKeys: try webPushKeys(p256dh: p256dh, auth: auth, coding: coding),
            createdAt: environment.clock.now())
        try await environment.store.createRegistration(registration)
        return registration
    }

    /// A web app token whose messages are handed to the browser's own push service at
    /// `endpoint` (SEMANTICS W1): the endpoint's host must be reachable as a webhook target is,
    /// and the subscription made with the project's application server key, which signs them.
    private func createHandedOffWebRegistration(
        project: Project, installationID: String?, endpoint: (String, String), keys: WebPushKeys,
        applicationPubKey: String?
    ) async throws -> Registration {
        if let refusal = environment.webPushAddressRefusal(endpoint.0) {
            environment.metrics.increment("herald_registrations_refused_total", [("reason", "web-push-address")])
            throw HeraldError.invalidField(endpoint.1, "The endpoint's push service may not be reached: \(refusal).")
        }
        guard let key = try await environment.store.webPushKey(projectID: project.id) else {
            throw HeraldError(
                status: .failedPrecondition,
                message:
                    "The project has no Web Push key yet; `herald project web-push-key \(project.id)` makes and shows it."
            )
        }
        if let applicationPubKey, Base64URL.decode(applicationPubKey) != key.publicKey {
            environment.metrics.increment("herald_registrations_refused_total", [("reason", "web-push-key")])
            throw HeraldError.invalidField(
                "web.applicationPubKey",
                "The subscription must be made with the project's Web Push key, \(key.applicationServerKey) "
                    + "(getToken's vapidKey).")
        }
        let now = environment.clock.now()
        // The web app's Firebase app id, which notification messages collapse by (D2).
        var appID = ""
        if let installationID,
            let installation = try await environment.store.installation(
                fid: installationID, projectID: project.id)
        {
            appID = installation.appID
        }
        let device = try await environment.store.createHandOffDevice(at: now)
        let registration = Registration(
            token: Registration.makeToken(), kind: .app, projectID: project.id, sender: String(project.number),
            appID: appID, subtype: nil, platform: .web, androidID: device.androidID, installationID: installationID,
            webKeys: keys, webPushEndpoint: endpoint.0, createdAt: now)
        try await environment.store.createRegistration(registration)
        environment.logger.info(
            "web registration handed to its push service",
            metadata: [
                "project": "\(project.id)", "token": "\(Registration.redacted(registration.token))",
                "service": "\(WebOrigin.of(endpoint.0))",
            ])
        return registration
    }

    /// The keys a registration's messages are encrypted for (RFC 8291), each argument with
    /// the field name its error names.
    private func webPushKeys(p256dh: (String?, String), auth: (String?, String), coding: (String, String)) throws
        -> WebPushKeys
    {
        guard let publicKey = p256dh.0.flatMap(Base64URL.decode),
            (try? P256.KeyAgreement.PublicKey(x963Representation: publicKey)) != nil
        else {
            throw HeraldError.invalidField(
                p256dh.1, "\(p256dh.1.split(separator: ".").last ?? "") must be an uncompressed P-256 public key.")
        }
        guard let secret = auth.0.flatMap(Base64URL.decode), secret.count == 16 else {
            throw HeraldError.invalidField(
                auth.1, "\(auth.1.split(separator: ".").last ?? "") must be a 16-byte secret.")
        }
        guard WebPushEncryption.Coding(rawValue: coding.0) != nil else {
            throw HeraldError.invalidField(
                coding.1, "\(coding.1.split(separator: ".").last ?? "") must be aesgcm or aes128gcm.")
        }
        return WebPushKeys(p256dh: publicKey, auth: secret, coding: coding.0)
    }

    /// Throws `PERMISSION_DENIED` unless `project` may build a registration on `channel`.
    private func checkBinding(
        of channel: Registration, to project: Project, applicationPubKey: String?, authorization: String?
    ) async throws {
        var ownerProven = false
        if let (androidID, securityToken) = Register3Endpoint.parseAidLogin(authorization),
            androidID == channel.androidID
        {
            ownerProven = try await environment.store.device(androidID: androidID)?.securityToken == securityToken
        }
        // The projects whose live registrations ride this channel: the same device, app,
        // subtype and sender.
        let bound = Set(
            try await environment.store.registrations(androidID: channel.androidID).compactMap { registration in
                registration.kind == .app && registration.deletedAt == nil && registration.appID == channel.appID
                    && registration.subtype == channel.subtype && registration.sender == channel.sender
                    ? registration.projectID : nil
            })
        if let refusal = WebChannelBinding.refusal(
            channelSender: channel.sender, project: project, applicationPubKey: applicationPubKey,
            ownerProven: ownerProven, boundProjects: bound)
        {
            environment.metrics.increment("herald_registrations_refused_total", [("reason", "web-channel")])
            throw HeraldError.permissionDenied(refusal.description)
        }
    }

    /// The legacy web subscription older web receivers make (`/fcm/connect/subscribe`): a
    /// form naming the project by its sender id (`authorized_entity`), the push channel
    /// (`endpoint`) and the keys; answered with the token and an opaque `pushSet`. The
    /// project must be one the channel may carry, as for `createWebRegistration`.
    func legacyWebSubscription(_ body: ByteBuffer, authorization: String? = nil) async throws -> Response {
        guard let form = FormBody.parse(body.readableBytesView) else {
            throw HeraldError.invalidArgument("The form body is not valid percent-encoding.")
        }
        guard let number = form["authorized_entity"].flatMap({ Int64($0) }),
            let project = await environment.directory.find({ $0.project(number: number) })
        else { throw HeraldError.invalidField("authorized_entity", "authorized_entity must be a project's sender id.") }
        let registration = try await createWebRegistration(
            project: project, installationID: nil, endpoint: (form["endpoint"], "endpoint"),
            p256dh: (form["encryption_key"], "encryption_key"), auth: (form["encryption_auth"], "encryption_auth"),
            coding: ("aesgcm", "encryption"), authorization: authorization)
        environment.metrics.increment("herald_registrations_total", [("kind", "web-legacy")])
        return Response.json(
            .stringObject([("token", registration.token), ("pushSet", SecureRandom.token(bytes: 16))]))
    }

    private func parseJSONBody(_ body: ByteBuffer) throws -> JSONValue {
        do {
            return try JSONParser.parse(body.readableBytesView)
        } catch {
            throw HeraldError.invalidArgument("Invalid JSON payload received. \(error.description).")
        }
    }
}
