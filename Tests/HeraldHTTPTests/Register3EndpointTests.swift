import Crypto
import Foundation
import HeraldClient
import HeraldCore
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import HeraldTools
import Testing

/// `register3` as real clients use it, against a running node: topic subscriptions with the
/// token as sender (Apple SDK, Chromium, `fcm-receiver`), a browser deleting one site's
/// subscription, and projects usable the moment they are created.
@Suite struct Register3EndpointTests {
    static func topicFields(_ token: String, _ topic: String, app: String = "com.example.raw", delete: Bool = false)
        -> [(String, String)]
    {
        [
            ("app", app), ("sender", token), ("X-subtype", token), ("X-gcm.topic", "/topics/\(topic)"),
            ("X-scope", "/topics/\(topic)"),
        ] + (delete ? [("delete", "true")] : [])
    }

    @Test func T2_aTopicRequestSubscribesTheSameTokenAndItsDeleteKeepsTheToken() async throws {
        try await GatewayHarness.with { harness in
            let (device, token) = try await harness.makeDevice()
            let subscribed = try await harness.register3(device, Self.topicFields(token, "news"))
            #expect(subscribed.status == 200)
            #expect(subscribed.line == "token=\(token)")
            #expect(try await harness.node.store.subscriptions(token: token).map(\.topic) == ["news"])
            #expect(try await harness.node.store.registrations(androidID: device.androidID).count == 1)

            let unsubscribed = try await harness.register3(device, Self.topicFields(token, "news", delete: true))
            #expect(unsubscribed.line == "token=\(token)")
            #expect(try await harness.node.store.subscriptions(token: token).isEmpty)
            // The token is still registered: a send to it is accepted.
            _ = try await harness.send(#"{"token":"\#(token)","data":{"still":"here"}}"#)
        }
    }

    @Test func aTopicRequestForAnotherDevicesOrAppsTokenIsRefused() async throws {
        try await GatewayHarness.with { harness in
            let (owner, token) = try await harness.makeDevice()
            let (stranger, _) = try await harness.makeDevice()
            let foreign = try await harness.register3(stranger, Self.topicFields(token, "news"))
            #expect(foreign.status == 400)
            #expect(foreign.line == "Error=INVALID_SENDER")
            let otherApp = try await harness.register3(owner, Self.topicFields(token, "news", app: "com.other"))
            #expect(otherApp.line == "Error=INVALID_SENDER")
            #expect(try await harness.node.store.subscriptions(token: token).isEmpty)
        }
    }

    @Test func T2_topicRequestsCountTowardTheProjectsTopicOperations() async throws {
        // A clock that stands still: the three requests fall in one second however slow the machine.
        try await GatewayHarness.with(clock: ManualClock(), settings: { $0.topicOpsPerSecond = 2 }) { harness in
            let (device, token) = try await harness.makeDevice()
            var answers: [String] = []
            for topic in ["a", "b", "c"] {
                answers.append(try await harness.register3(device, Self.topicFields(token, topic)).line)
            }
            #expect(answers.filter { $0 == "token=\(token)" }.count == 2)
            #expect(answers.last == "Error=QUOTA_EXCEEDED")
        }
    }

    @Test func L6_aBrowserDeletesOneSitesChannelAndItsWebRegistrationsOnlyAndMayRepeat() async throws {
        try await GatewayHarness.with { harness in
            let device = Device.make(at: harness.node.clock.now())
            try await harness.node.store.createDevice(device)
            var channels: [String] = []
            for site in ["wp:http://localhost:1/#a", "wp:http://localhost:2/#b"] {
                let answer = try await harness.register3(
                    device,
                    [
                        ("app", "org.chromium.linux"), ("X-subtype", site), ("appid", "cXr5b1"), ("sender", "BKey"),
                        ("scope", "GCM"), ("X-scope", "GCM"), ("device", String(device.androidID)),
                    ])
                channels.append(String(answer.line.dropFirst("token=".count)))
            }
            let registrar = try DeviceRegistrar(server: harness.server)
            let installation = try await registrar.install(
                projectID: harness.project.id, apiKey: harness.project.apiKey, appID: "1:web")
            var webTokens: [String] = []
            for channel in channels {
                webTokens.append(
                    try await registrar.registerWeb(
                        projectID: harness.project.id, apiKey: harness.project.apiKey,
                        installationAuth: installation.authToken, channelToken: channel,
                        p256dh: Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation),
                        auth: Array(repeating: 7, count: 16)))
            }
            let delete: [(String, String)] = [
                ("delete", "true"), ("app", "org.chromium.linux"), ("X-subtype", "wp:http://localhost:1/#a"),
                ("appid", "cXr5b1"), ("sender", "*"), ("scope", "*"), ("X-scope", "*"),
                ("device", String(device.androidID)),
            ]
            for _ in 0..<2 {
                let answer = try await harness.register3(device, delete)
                #expect(answer.status == 200)
                #expect(answer.line == "token=cXr5b1")
            }
            let left = try await harness.node.store.registrations(androidID: device.androidID).map(\.token)
            #expect(Set(left) == [channels[1], webTokens[1]])
            #expect(try await harness.sendRequest(#"{"token":"\#(webTokens[0])"}"#).status == 404)
            #expect(try await harness.sendRequest(#"{"token":"\#(webTokens[1])"}"#).status == 200)

            let gcm = try await harness.register3(
                device,
                [("delete", "true"), ("app", "org.chromium.linux"), ("X-subtype", "wp:http://localhost:2/#b")])
            #expect(gcm.line == "deleted=wp:http://localhost:2/#b")
            #expect(try await harness.node.store.registrations(androidID: device.androidID).isEmpty)
        }
    }

    @Test func aProjectCreatedWhileTheNodeRunsRegistersAndSendsAtOnce() async throws {
        try await GatewayHarness.with { harness in
            let issued = try await ProjectAdministration(store: harness.node.store).createProject(
                id: "fresh-project", publicURL: harness.server, keyFileDirectory: harness.directory)
            let device = Device.make(at: harness.node.clock.now())
            try await harness.node.store.createDevice(device)
            let answer = try await harness.register3(
                device, [("app", "com.example.fresh"), ("sender", String(issued.project.number))])
            #expect(answer.line.hasPrefix("token="))
            let registrar = try DeviceRegistrar(server: harness.server)
            _ = try await registrar.install(
                projectID: issued.project.id, apiKey: issued.project.apiKey, appID: "1:fresh")
            var account = try ServiceAccountCredentials(keyFile: issued.keyFilePath)
            account.tokenURI = "\(harness.server)/token"
            let accessToken = try await account.accessToken(now: harness.node.clock.now())
            let token = String(answer.line.dropFirst("token=".count))
            let sent = try await HTTPConnection.with(host: "127.0.0.1", port: harness.httpPort) { connection in
                try await connection.request(
                    .POST, "/v1/projects/fresh-project/messages:send",
                    headers: [("Authorization", "Bearer \(accessToken)"), ("Content-Type", "application/json")],
                    body: Array(#"{"message":{"token":"\#(token)"}}"#.utf8))
            }
            #expect(sent.status == 200)
        }
    }
}
