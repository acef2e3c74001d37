import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldProtocol
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Web registrations whose endpoints are at a browser's own push service (SEMANTICS W1, W2):
/// which endpoints and keys are taken, and what a send to such a token stores.
@Suite struct WebPushHandOffRegistrationTests {
    /// A node that knows `localhost` and `127.0.0.1` as push services and may reach the first.
    static func server() async throws -> TestServer {
        try await TestServer.make { configuration in
            configuration.webPushServices = WebPushServices(adding: ["localhost", "127.0.0.1"])
            configuration.webhookAllowedHosts = ["localhost"]
        }
    }

    static func post(
        _ path: String, _ body: String, headers: [(String, String)], client: any TestClientProtocol
    ) async throws -> TestResponse {
        var fields: HTTPFields = [.contentType: "application/json"]
        for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
        return try await client.execute(uri: path, method: .post, headers: fields, body: ByteBuffer(string: body))
    }

    /// Registers `endpoint` as Firebase's JavaScript SDK does: an installation, then the registration.
    static func register(
        _ endpoint: String, key: String?, server: TestServer, client: any TestClientProtocol
    ) async throws -> TestResponse {
        let project = server.project
        let api = [("x-goog-api-key", project.apiKey)]
        let installation = try await post(
            "/v1/projects/\(project.id)/installations", #"{"appId":"1:\#(project.number):web:site"}"#, headers: api,
            client: client
        ).json()
        let browser = Base64URL.encode(Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation))
        let auth = Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        let named = key.map { #","applicationPubKey":"\#($0)""# } ?? ""
        return try await post(
            "/v1/projects/\(project.id)/registrations",
            #"{"web":{"endpoint":"\#(endpoint)","p256dh":"\#(browser)","auth":"\#(auth)"\#(named)}}"#,
            headers: api + [
                ("x-goog-firebase-installations-auth", installation["authToken"]?["token"]?.stringValue ?? "")
            ], client: client)
    }

    @Test func W1_anEndpointAtAKnownReachableServiceMadeWithTheProjectsKeyGetsAToken() async throws {
        let server = try await Self.server()
        let endpoint = "https://localhost:9443/push/abc"
        try await server.test { client in
            // No key yet: nothing could have subscribed with it.
            let early = try await Self.register(endpoint, key: nil, server: server, client: client)
            #expect(early.status == .badRequest)
            #expect(try early.json()["error"]?["status"]?.stringValue == "FAILED_PRECONDITION")
            let key = try await server.store.keepWebPushKey(
                VAPID.makeKey(projectID: server.project.id, at: server.clock.now()))
            let made = try await Self.register(
                endpoint, key: key.applicationServerKey, server: server, client: client)
            #expect(made.status == .ok)
            let token = try #require(try made.json()["token"]?.stringValue)
            let registration = try #require(try await server.store.registration(token: token))
            #expect(registration.webPushEndpoint == endpoint && registration.platform == .web)
            #expect(Device.isHandOff(registration.androidID) && registration.webKeys?.coding == "aes128gcm")
            #expect(registration.appID == "1:\(server.project.number):web:site")
            // Another key (the SDK's default, when vapidKey is left out) is refused, naming the project's.
            let other = Base64URL.encode(Array(P256.Signing.PrivateKey().publicKey.x963Representation))
            let refused = try await Self.register(endpoint, key: other, server: server, client: client)
            #expect(refused.status == .badRequest)
            #expect(try refused.json()["error"]?["message"]?.stringValue?.contains(key.applicationServerKey) == true)
            // Unknown services, plain HTTP, and a service whose address is loopback are refused.
            for unreachable in [
                "https://push.example.org/p/1", "http://localhost:9443/push/1", "https://127.0.0.1:9443/push/1",
            ] {
                let answer = try await Self.register(
                    unreachable, key: key.applicationServerKey, server: server, client: client)
                #expect(answer.status == .badRequest, "\(unreachable)")
                #expect(try answer.json()["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
            }
        }
    }

    @Test func W2_aMessageIsSealedWhenAcceptedAndOneTooLargeOnceSealedIsRefused() async throws {
        let server = try await Self.server()
        let key = try await server.store.keepWebPushKey(
            VAPID.makeKey(projectID: server.project.id, at: server.clock.now()))
        try await server.test { client in
            let made = try await Self.register(
                "https://localhost:9443/push/abc", key: key.applicationServerKey, server: server, client: client)
            let token = try #require(try made.json()["token"]?.stringValue)
            let registration = try #require(try await server.store.registration(token: token))
            let accessToken = try await server.accessToken(client)
            let headers = [("Authorization", "Bearer \(accessToken)")]
            let send = "/v1/projects/\(server.project.id)/messages:send"
            let big = String(repeating: "x", count: 3990)
            let refused = try await Self.post(
                send, #"{"message":{"token":"\#(token)","data":{"big":"\#(big)"}}}"#, headers: headers, client: client)
            #expect(refused.status == .badRequest)
            #expect(try refused.json()["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
            #expect(try await server.store.queuedCount(androidID: registration.androidID) == 0)
            let sent = try await Self.post(
                send,
                #"{"message":{"token":"\#(token)","data":{"k":"v"},"webpush":{"headers":{"Urgency":"low"}}}}"#,
                headers: headers, client: client)
            #expect(sent.status == .ok)
            let queued = try await server.store.pendingMessages(
                androidID: registration.androidID, after: 0, limit: 10, now: server.clock.now())
            let stanza = try McsProto_DataMessageStanza(serializedBytes: try #require(queued.first).stanza)
            let appData = Dictionary(uniqueKeysWithValues: stanza.appData.map { ($0.key, $0.value) })
            #expect(appData["content-encoding"] == "aes128gcm" && appData["urgency"] == "low")
            // Only ciphertext is stored.
            #expect(!String(decoding: stanza.rawData, as: UTF8.self).contains("\"k\""))
        }
    }
}
