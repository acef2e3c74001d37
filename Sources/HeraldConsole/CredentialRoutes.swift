import Foundation
import HeraldCore
import HeraldHTTP
import HeraldHandOffs
import HeraldProtocol
import HeraldStorage
import Hummingbird
import NIOCore
import NIOPosix

/// A project's credentials at `/console/projects/{project}/credentials`: its sender id, API
/// key and server key, and its service-account keys with their ids and ages. An admin
/// creates a key (its file is downloaded at once, and its private key kept nowhere else),
/// rotates one (a new key, the old one revoked) or revokes one, and gives, replaces or
/// removes the project's APNs credentials (a `.p8` signing key, or a client certificate as
/// PEM or base64 PKCS#12), checked as `herald project apns-key` and `apns-certificate` check them.
/// It lists the project's webhooks, a paused one with its last errors, which an admin resumes.
struct CredentialRoutes {
    let directory: CredentialDirectory
    let store: any CredentialStore & APNsCredentialStore & FCMRelayCredentialStore & WebPushKeyStore & WebhookStore
    let clock: any HeraldClock
    /// The ids a webhook's position is shown with: the store's count tells of other projects.
    let eventIDs: EventIDs
    /// The address the key files' `token_uri` points at.
    let publicURL: String
    var access: ProjectAccess { ProjectAccess(directory: directory) }

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project/credentials") { _, context in
            try await page(try access.opened(context), status: nil)
        }
        pages.post("projects/:project/credentials/keys") { _, context in
            try await download(try administered(context), revoking: nil, context)
        }
        pages.post("projects/:project/credentials/keys/:key/rotate") { _, context in
            let opened = try administered(context)
            return try await download(opened, revoking: try key(context, of: opened), context)
        }
        pages.post("projects/:project/credentials/apns-key") { _, context in try await setAPNs(.token, context) }
        pages.post("projects/:project/credentials/apns-certificate") { _, context in
            try await setAPNs(.certificate, context)
        }
        pages.post("projects/:project/credentials/apns/:kind/remove") { _, context in
            let opened = try administered(context)
            guard let kind = APNsCredential.Kind(rawValue: try context.parameters.require("kind")) else {
                throw ConsoleRefusal(status: .notFound, reason: "No such APNs credential.", session: opened.session)
            }
            let removed = try await store.removeAPNsCredential(projectID: opened.project.id, kind: kind)
            context.logger.notice(
                "console apns credential removed",
                metadata: [
                    "user": "\(opened.user.name)", "project": "\(opened.project.id)", "kind": "\(kind.rawValue)",
                ])
            return try await page(opened, status: removed ? "Removed." : "There was none.")
        }
        pages.post("projects/:project/credentials/fcm-relay") { _, context in try await setFCMRelay(context) }
        pages.post("projects/:project/credentials/fcm-relay/remove") { _, context in
            let opened = try administered(context)
            let removed = try await store.removeFCMRelayCredential(projectID: opened.project.id)
            context.logger.notice(
                "console fcm relay key removed",
                metadata: ["user": "\(opened.user.name)", "project": "\(opened.project.id)"])
            return try await page(opened, status: removed ? "Removed." : "There was none.")
        }
        pages.post("projects/:project/credentials/web-push-key") { _, context in
            let opened = try administered(context)
            let key = try await store.keepWebPushKey(VAPID.makeKey(projectID: opened.project.id, at: clock.now()))
            context.logger.notice(
                "console web push key made",
                metadata: ["user": "\(opened.user.name)", "project": "\(opened.project.id)"])
            return try await page(opened, status: "The project's Web Push key: \(key.applicationServerKey).")
        }
        pages.post("projects/:project/credentials/webhooks/:webhook/resume") { _, context in
            let opened = try administered(context)
            let id = try context.parameters.require("webhook")
            guard let webhook = try await store.webhooks(projectID: opened.project.id).first(where: { $0.id == id })
            else { throw ConsoleRefusal(status: .notFound, reason: "No such webhook.", session: opened.session) }
            try await store.replaceWebhook(webhook.resumed(at: clock.now()))
            context.logger.notice(
                "console webhook resumed", metadata: ["user": "\(opened.user.name)", "webhook": "\(id)"])
            return try await page(opened, status: "Webhook \(id) resumed after \(position(of: webhook)).")
        }
        pages.post("projects/:project/credentials/keys/:key/revoke") { _, context in
            let opened = try administered(context)
            let key = try await key(context, of: opened)
            let revoked = try await store.revokeServiceAccountKey(id: key.id, at: clock.now())
            try await directory.reload(from: store, force: true)
            context.logger.notice(
                "console key revoked", metadata: ["user": "\(opened.user.name)", "key": "\(key.id)"])
            return try await page(
                opened, status: revoked ? "Key \(key.id) revoked." : "Key \(key.id) was revoked already.")
        }
    }

    /// Stores an APNs credential from the console's form, replacing the project's credential
    /// of its kind; a refused one changes nothing and the page says why.
    private func setAPNs(_ kind: APNsCredential.Kind, _ context: ConsoleRequestContext) async throws -> Response {
        let opened = try administered(context)
        let form = context.form
        let environment = form["environment"].flatMap(APNsCredential.Environment.init(rawValue:))
        let now = clock.now()
        let credential: APNsCredential
        do {
            switch kind {
            case .token:
                credential = try APNsCredentialFile.signingKey(
                    pem: form["key"] ?? "", keyID: form["key_id"] ?? "", teamID: form["team_id"] ?? "",
                    bundleID: form["bundle_id"] ?? "", environment: environment ?? .both,
                    projectID: opened.project.id, now: now)
            case .certificate:
                let text = form["certificate"] ?? ""
                let isPEM = text.contains("-----BEGIN")
                guard
                    let bytes = isPEM
                        ? Array(text.utf8)
                        : Data(base64Encoded: text, options: .ignoreUnknownCharacters).map(Array.init)
                else { throw APNsCredentialFile.Failure("The certificate is neither PEM nor base64 PKCS#12.") }
                credential = try APNsCredentialFile.certificate(
                    bytes: bytes, password: isPEM ? nil : form["password"] ?? "",
                    bundleID: form["bundle_id"].flatMap { $0.isEmpty ? nil : $0 }, environment: environment,
                    projectID: opened.project.id, now: now)
            }
        } catch {
            return try await page(
                opened, status: "Not stored: \((error as? APNsCredentialFile.Failure)?.description ?? "unreadable.")")
        }
        try await store.setAPNsCredential(credential)
        context.logger.notice(
            "console apns credential stored",
            metadata: ["user": "\(opened.user.name)", "project": "\(opened.project.id)", "kind": "\(kind.rawValue)"])
        return try await page(opened, status: "Stored: \(credential.summary).")
    }

    /// Stores the project's key for the hand-off to FCM from the console's form, replacing
    /// the one it had; a refused one changes nothing and the page says why.
    private func setFCMRelay(_ context: ConsoleRequestContext) async throws -> Response {
        let opened = try administered(context)
        let credential: FCMRelayCredential
        do {
            credential = try FCMServiceAccountFile.credential(
                bytes: Array((context.form["key"] ?? "").utf8), projectID: opened.project.id, now: clock.now())
        } catch {
            return try await page(opened, status: "Not stored: \(error.description)")
        }
        try await store.setFCMRelayCredential(credential)
        context.logger.notice(
            "console fcm relay key stored",
            metadata: ["user": "\(opened.user.name)", "project": "\(opened.project.id)"])
        return try await page(opened, status: "Stored: \(credential.summary).")
    }

    /// The opened project, when its user is an admin.
    private func administered(_ context: ConsoleRequestContext) throws -> ProjectAccess.Opened {
        let opened = try access.opened(context)
        guard opened.user.isAdmin else {
            throw ConsoleRefusal(
                status: .forbidden, reason: "Only an admin may change a project's keys.", session: opened.session)
        }
        return opened
    }

    /// The project's key the path names.
    private func key(_ context: ConsoleRequestContext, of opened: ProjectAccess.Opened) async throws
        -> ServiceAccountKey
    {
        let id = try context.parameters.require("key")
        guard let key = try await store.serviceAccountKey(id: id), key.projectID == opened.project.id else {
            throw ConsoleRefusal(
                status: .notFound, reason: "\(opened.project.id) has no key \(id).", session: opened.session)
        }
        return key
    }

    /// Issues a key, revoking `revoking` after it, and answers with its file to download.
    private func download(
        _ opened: ProjectAccess.Opened, revoking: ServiceAccountKey?, _ context: ConsoleRequestContext
    )
        async throws -> Response
    {
        let now = clock.now()
        // A new RSA key takes tens of milliseconds: made on NIO's thread pool, not on the
        // event loop that runs the request.
        let (key, file) = try await NIOThreadPool.singleton.runIfActive { [publicURL] in
            try ServiceAccountKeyFile.issue(projectID: opened.project.id, publicURL: publicURL, now: now)
        }
        try await store.addServiceAccountKey(key)
        if let revoking { _ = try await store.revokeServiceAccountKey(id: revoking.id, at: now) }
        try await directory.reload(from: store, force: true)
        context.logger.notice(
            "console key created",
            metadata: ["user": "\(opened.user.name)", "key": "\(key.id)", "revoked": "\(revoking?.id ?? "")"])
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.contentDisposition] = "attachment; filename=\"\(opened.project.id)-service-account.json\""
        headers[.cacheControl] = "no-store"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: file.contents)))
    }

    private func page(_ opened: ProjectAccess.Opened, status: String?) async throws -> Response {
        let project = opened.project
        let now = clock.now()
        var values = opened.values("credentials", title: "Credentials")
        values["status"] = status
        values["sender"] = String(project.number)
        values["apiKey"] = project.apiKey
        values["serverKey"] = project.serverKey
        values["keys"] = try await store.serviceAccountKeys(projectID: project.id).map {
            key -> [String: Any] in
            [
                "id": key.id, "email": key.clientEmail, "created": UTCTime.shown(key.createdAt),
                "age": "\((now.milliseconds - key.createdAt.milliseconds) / 86_400_000) days",
                "state": key.revokedAt.map { "revoked \(UTCTime.shown($0))" } ?? "active", "active": key.isActive,
            ]
        }
        // What the credentials are, never their keys.
        let apns = try await store.apnsCredentials(projectID: project.id)
        values["apns"] = apns.map { ["summary": $0.summary, "kind": $0.kind.rawValue] as [String: Any] }
        values["apnsNone"] = apns.isEmpty
        values["fcmRelay"] = try await store.fcmRelayCredential(projectID: project.id)?.summary
        values["webPushKey"] = try await store.webPushKey(projectID: project.id)?.applicationServerKey
        let webhooks = try await store.webhooks(projectID: project.id)
        values["webhooks"] = webhooks.map { webhook -> [String: Any] in
            [
                "id": webhook.id, "url": webhook.url, "state": webhook.state.rawValue,
                "paused": webhook.state == .paused, "after": position(of: webhook),
                "events": webhook.types.isEmpty
                    ? "all" : webhook.types.map(\.rawValue).sorted().joined(separator: ", "),
                "failures": webhook.failures > 0 ? "failing \(webhook.failures) times in a row" : "",
                "errors": webhook.lastErrors.map { ["error": $0] },
            ]
        }
        values["webhooksNone"] = webhooks.isEmpty
        return ConsoleResponse.page("credentials", values)
    }

    /// Where a webhook stands, as the event it sent last (by the id its receiver was given).
    func position(of webhook: Webhook) -> String {
        webhook.cursor == 0
            ? "the start" : "event \(eventIDs.id(sequence: webhook.cursor, projectID: webhook.projectID))"
    }

}
