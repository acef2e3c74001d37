import Foundation
import HTTPTypes
import HeraldConsole
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import _CryptoExtras

/// The credentials page: an admin's new key comes as a file whose key signs in at once,
/// rotating revokes the old key, another project's key is not found, and other users may
/// only look.
@Suite struct ConsoleCredentialTests {
    @Test func anAdminsNewKeyWorksAtOnceRotationRevokesAndOthersMayOnlyLook() async throws {
        let server = try await ConsoleTests().serverWithAdmin()
        let page = "/console/projects/test-project/credentials"
        try await server.test { client in
            var ada = ConsoleTests.Browser()
            _ = try await ada.signIn(client, name: "ada", password: ConsoleTests.password)
            let seen = String(buffer: try await ada.get(client, page).body)
            #expect(seen.contains(server.project.serverKey) && seen.contains(server.key.id) && !seen.contains("Rotate"))
            #expect(seen.contains("None: messages to Apple app instances"))
            // Only an admin may give one.
            #expect(try await ada.post(client, page + "/apns-key", "csrf=\(ada.csrf)&key=x").status == .forbidden)
            // APNs credentials are listed by what they are, never with their key.
            try await server.store.setAPNsCredential(
                APNsCredential(
                    projectID: "test-project",
                    secret: .signingKey(keyID: "KEY1234567", teamID: "TEAM123456", privateKeyPEM: "PRIVATE PART"),
                    bundleID: "com.example.app", environment: .production, createdAt: server.clock.now()))
            let listed = String(buffer: try await ada.get(client, page).body)
            #expect(listed.contains("token: key KEY1234567, team TEAM123456, bundle com.example.app, production"))
            #expect(!listed.contains("PRIVATE PART"))
            #expect(try await ada.post(client, page + "/keys", "csrf=\(ada.csrf)").status == .forbidden)

            var root = ConsoleTests.Browser()
            _ = try await root.signIn(client, name: "root", password: ConsoleTests.password)
            _ = try await root.get(client, page)
            #expect(try await root.post(client, page + "/keys", "").status == .forbidden)
            let rotated = try await root.post(client, page + "/keys/\(server.key.id)/rotate", "csrf=\(root.csrf)")
            #expect(rotated.status == .ok)
            #expect(
                rotated.headers[.contentDisposition] == "attachment; filename=\"test-project-service-account.json\"")
            let file = try JSONParser.parse(Array(rotated.body.readableBytesView))
            let keyID = try #require(file["private_key_id"]?.stringValue)
            let pem = try #require(file["private_key"]?.stringValue)
            let keys = try await server.store.serviceAccountKeys(projectID: "test-project")
            #expect(keys.count == 2 && keys.first { $0.id == server.key.id }?.isActive == false)
            #expect(keys.first { $0.id == keyID }?.isActive == true)
            // The downloaded key signs in; the rotated one no longer does.
            let signer = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
            let fresh = try server.assertion(keyID: keyID, signedWith: signer)
            #expect(try await TestServer.exchange(fresh, client: client).status == .ok)
            #expect(try await TestServer.exchange(try server.assertion(), client: client).status != .ok)
            let other = try #require(try await server.store.serviceAccountKeys(projectID: "other-project").first)
            let elsewhere = try await root.post(client, page + "/keys/\(other.id)/revoke", "csrf=\(root.csrf)")
            #expect(elsewhere.status == .notFound)
            #expect(try await server.store.serviceAccountKey(id: other.id)?.isActive == true)
            let revoked = try await root.post(client, page + "/keys/\(keyID)/revoke", "csrf=\(root.csrf)")
            #expect(revoked.status == .ok && String(buffer: revoked.body).contains("Key \(keyID) revoked."))
        }
    }
}

/// The webhooks on the credentials page (SEMANTICS E5): a paused one shows its last errors and
/// an admin resumes it; another user only looks.
@Suite struct ConsoleWebhookTests {
    @Test func E5_aPausedWebhookShowsItsLastErrorsAndAnAdminResumesIt() async throws {
        let server = try await ConsoleTests().serverWithAdmin()
        let page = "/console/projects/test-project/credentials"
        var failing = Webhook.make(
            projectID: "test-project", url: "https://hooks.example/in", types: [.delivered], cursor: 12,
            at: server.clock.now())
        failing = failing.failed("HTTP 503 for event 13", at: server.clock.now())
        failing.state = .paused
        let webhook = failing
        try await server.store.addWebhook(webhook)
        // Where it stands is the id of the event it sent last, not the store's count.
        let position = "event " + server.node.environment.eventIDs.id(sequence: 12, projectID: "test-project")
        try await server.test { client in
            var ada = ConsoleTests.Browser()
            _ = try await ada.signIn(client, name: "ada", password: ConsoleTests.password)
            let seen = String(buffer: try await ada.get(client, page).body)
            #expect(seen.contains(webhook.id) && seen.contains("https://hooks.example/in"))
            #expect(
                seen.contains("paused after \(position)") && !seen.contains("event 12")
                    && seen.contains("HTTP 503 for event 13"))
            #expect(!seen.contains("Resume webhook") && !seen.contains(webhook.secret))
            let refused = try await ada.post(client, page + "/webhooks/\(webhook.id)/resume", "csrf=\(ada.csrf)")
            #expect(refused.status == .forbidden)

            var root = ConsoleTests.Browser()
            _ = try await root.signIn(client, name: "root", password: ConsoleTests.password)
            #expect(String(buffer: try await root.get(client, page).body).contains("Resume webhook \(webhook.id)"))
            let resumed = try await root.post(client, page + "/webhooks/\(webhook.id)/resume", "csrf=\(root.csrf)")
            #expect(resumed.status == .ok)
            #expect(String(buffer: resumed.body).contains("active after \(position)"))
            #expect(try await server.store.webhooks(projectID: "test-project").first?.state == .active)
            let unknown = try await root.post(client, page + "/webhooks/wh_nope/resume", "csrf=\(root.csrf)")
            #expect(unknown.status == .notFound)
        }
    }
}

/// The key for the hand-off to FCM on the credentials page (SEMANTICS R1): an admin gives it
/// as the key file's text, checked as `herald project fcm-relay` checks it; it is listed by
/// its account, never its key, and removed; others only look.
@Suite struct ConsoleFCMRelayTests {
    @Test func R1_anAdminGivesChecksAndRemovesTheKey() async throws {
        let server = try await ConsoleTests().serverWithAdmin()
        let page = "/console/projects/test-project/credentials"
        let pem = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        let file = JSONValue.stringObject([
            ("type", "service_account"), ("project_id", "google-app"), ("private_key_id", "k1"),
            ("client_email", "relay@google-app.iam.gserviceaccount.com"),
            ("token_uri", "https://oauth2.googleapis.com/token"), ("private_key", pem),
        ]).rendered
        @Sendable func form(_ text: String) -> String {
            "key=" + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }
        try await server.test { client in
            var ada = ConsoleTests.Browser()
            _ = try await ada.signIn(client, name: "ada", password: ConsoleTests.password)
            #expect(String(buffer: try await ada.get(client, page).body).contains("None: a token Herald did not issue"))
            let refused = try await ada.post(client, page + "/fcm-relay", "csrf=\(ada.csrf)&" + form(file))
            #expect(refused.status == .forbidden)
            var root = ConsoleTests.Browser()
            _ = try await root.signIn(client, name: "root", password: ConsoleTests.password)
            _ = try await root.get(client, page)
            let wrong = try await root.post(client, page + "/fcm-relay", "csrf=\(root.csrf)&" + form("{}"))
            #expect(String(buffer: wrong.body).contains("Not stored"))
            #expect(try await server.store.fcmRelayCredential(projectID: "test-project") == nil)
            let stored = String(
                buffer: try await root.post(client, page + "/fcm-relay", "csrf=\(root.csrf)&" + form(file)).body)
            #expect(stored.contains("relay@google-app.iam.gserviceaccount.com") && !stored.contains("PRIVATE KEY"))
            #expect(
                try await server.store.fcmRelayCredential(projectID: "test-project")?.googleProjectID == "google-app")
            let removed = try await root.post(client, page + "/fcm-relay/remove", "csrf=\(root.csrf)")
            #expect(String(buffer: removed.body).contains("Removed."))
            #expect(try await server.store.fcmRelayCredential(projectID: "test-project") == nil)
        }
    }
}

@Suite struct ConsoleWebPushKeyTests {
    @Test func W1_anAdminMakesTheProjectsWebPushKeyOnceAndEveryoneSeesIt() async throws {
        let server = try await ConsoleTests().serverWithAdmin()
        let page = "/console/projects/test-project/credentials"
        try await server.test { client in
            var ada = ConsoleTests.Browser()
            _ = try await ada.signIn(client, name: "ada", password: ConsoleTests.password)
            #expect(String(buffer: try await ada.get(client, page).body).contains("None yet"))
            #expect(try await ada.post(client, page + "/web-push-key", "csrf=\(ada.csrf)").status == .forbidden)
            var root = ConsoleTests.Browser()
            _ = try await root.signIn(client, name: "root", password: ConsoleTests.password)
            _ = try await root.get(client, page)
            _ = try await root.post(client, page + "/web-push-key", "csrf=\(root.csrf)")
            let key = try #require(try await server.store.webPushKey(projectID: "test-project"))
            // Made once: asking again keeps it.
            _ = try await root.post(client, page + "/web-push-key", "csrf=\(root.csrf)")
            #expect(try await server.store.webPushKey(projectID: "test-project") == key)
            #expect(String(buffer: try await ada.get(client, page).body).contains(key.applicationServerKey))
        }
    }
}
