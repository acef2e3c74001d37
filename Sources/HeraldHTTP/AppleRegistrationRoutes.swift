import HeraldCore
import Hummingbird

/// How Apple app instances reached through APNs get registration tokens (SEMANTICS A1):
/// an app server imports APNs device tokens (`POST /iid/v1:batchImport`), or the Firebase
/// iOS SDK registers its installation with its APNs token (`ios` in
/// `POST /v1/projects/{p}/registrations`, through `DeviceRegistrationRoutes`).
struct AppleRegistrationRoutes {
    let environment: RegistrationEnvironment
    /// APNs tokens one import may name.
    static let importLimit = 100

    func register(on router: Router<HeraldRequestContext>) {
        router.post("/iid/v1:batchImport") { request, _ in
            try await environment.authenticator.instanceIDRequest(request) { project in
                try await batchImport(try await request.collectBody(), project: project)
            }
        }
    }

    /// `{"application", "sandbox", "apns_tokens": [...]}` to one result per token, in order:
    /// `status` `OK` with the token's `registration_token` (the same one for a token
    /// imported again), or the reason it was refused.
    func batchImport(_ body: ByteBuffer, project: Project) async throws -> Response {
        guard let json = try? JSONParser.parse(body.readableBytesView) else {
            throw HeraldError.invalidArgument("The body is not a JSON object.")
        }
        guard let application = json["application"]?.stringValue, APNsCredential.isBundleID(application) else {
            throw HeraldError.invalidField("application", "application must be the app's bundle id.")
        }
        let sandbox: Bool
        switch json["sandbox"] {
        case nil: sandbox = false
        case .bool(let value)?: sandbox = value
        default: throw HeraldError.invalidField("sandbox", "sandbox must be true or false.")
        }
        guard let tokens = json["apns_tokens"]?.arrayElements, (1...Self.importLimit).contains(tokens.count) else {
            throw HeraldError.invalidField(
                "apns_tokens", "apns_tokens must list 1 to \(Self.importLimit) APNs device tokens.")
        }
        var results: [JSONValue] = []
        for token in tokens {
            let text = token.stringValue ?? token.rendered
            guard let address = token.stringValue.flatMap({ APNsAddress(deviceToken: $0, isSandbox: sandbox) }) else {
                results.append(.stringObject([("apns_token", text), ("status", "INVALID_ARGUMENT")]))
                continue
            }
            // Each token counts against the project's imports a minute; past them the rest of
            // the request is refused, and a request refused from its first token is a 429.
            guard environment.deviceRequests.admit(.projectImport, project.id) else {
                guard !results.isEmpty else {
                    throw HeraldError.quotaExceeded(
                        subject: "APNs token imports", retryAfterSeconds: 60,
                        message: "The project imported its APNs tokens allowed this minute.")
                }
                results.append(.stringObject([("apns_token", text), ("status", "RESOURCE_EXHAUSTED")]))
                continue
            }
            let registration = try await register(
                address, bundleID: application, installationID: nil, keys: nil, project: project)
            results.append(
                .stringObject([
                    ("apns_token", text), ("status", "OK"), ("registration_token", registration.token),
                ]))
        }
        environment.metrics.increment("herald_registrations_total", [("kind", "apns-import")], by: results.count)
        return Response.json(.object([(key: "results", value: .array(results))]))
    }

    /// The registration of an app instance reached through APNs at `address`: the live one
    /// the project has for the address and app (and installation and keys, when given),
    /// else a new one on a device of its own that stands for the app instance.
    func register(
        _ address: APNsAddress, bundleID: String, installationID: String?, keys: WebPushKeys?, project: Project
    ) async throws -> Registration {
        let store = environment.store
        if let known = try await store.registration(apns: address, projectID: project.id), known.appID == bundleID,
            installationID == nil || known.installationID == installationID, known.webKeys == keys
        {
            return known
        }
        let now = environment.clock.now()
        let device = try await store.createHandOffDevice(at: now)
        let registration = Registration(
            token: Registration.makeToken(), kind: .app, projectID: project.id, sender: String(project.number),
            appID: bundleID, subtype: nil, platform: .apple, androidID: device.androidID,
            installationID: installationID, webKeys: keys, apns: address, createdAt: now)
        try await store.createRegistration(registration)
        environment.logger.info(
            "apple app instance registered",
            metadata: [
                "project": "\(project.id)", "apns": "\(address.redacted)",
                "token": "\(Registration.redacted(registration.token))",
            ])
        return registration
    }
}
