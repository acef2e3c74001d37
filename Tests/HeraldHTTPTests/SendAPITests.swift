import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldHTTP

/// `POST /v1/projects/{p}/messages:send`: authentication, acceptance and FCM-shaped errors.
@Suite struct SendAPITests {
    @Test func L1_anAcceptedSendAnswersAUniqueNameAndIsStoredDurably() async throws {
        let store = try SQLiteStore(dataDirectory: temporaryDirectory())
        let server = try await TestServer.make(store: store)
        try await server.test { client in
            let token = try await server.accessToken(client)
            var names: Set<String> = []
            for _ in 0..<3 {
                let response = try await TestServer.send(
                    #"{"message":{"topic":"news","data":{"k":"v"}}}"#, project: "test-project", token: token,
                    client: client)
                #expect(response.status == .ok)
                let name = try #require(try response.json()["name"]?.stringValue)
                #expect(name.hasPrefix("projects/test-project/messages/0:"))
                names.insert(name)
                let id = String(name.dropFirst("projects/test-project/messages/".count))
                let stored = try #require(try await store.message(id: id))
                #expect(stored.target == "news")
                #expect(stored.body == #"{"data":{"k":"v"}}"#)
                #expect(stored.expiresAt == stored.createdAt.adding(seconds: 2_419_200))
            }
            #expect(names.count == 3)
        }
    }

    @Test func D5_theStoredExpiryFollowsTheTTL() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            let response = try await TestServer.send(
                #"{"message":{"condition":"'a' in topics","android":{"ttl":"60s"}}}"#, project: "test-project",
                token: token,
                client: client)
            let name = try #require(try response.json()["name"]?.stringValue)
            let stored = try #require(try await server.store.message(id: String(name.split(separator: "/").last!)))
            #expect(stored.expiresAt == stored.createdAt.adding(seconds: 60))
            #expect(stored.targetKind == .condition)
        }
    }

    @Test func validateOnlyAnswersANameAndStoresNothing() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            let response = try await TestServer.send(
                #"{"message":{"topic":"news"},"validate_only":true}"#, project: "test-project", token: token,
                client: client)
            #expect(try response.json()["name"] == .string("projects/test-project/messages/fake_message_id"))
            #expect(try await server.store.messageCount(projectID: "test-project") == 0)
        }
    }

    @Test func theProjectNumberNamesTheProjectToo() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            let response = try await TestServer.send(
                #"{"message":{"topic":"news"},"validate_only":true}"#, project: String(server.project.number),
                token: token,
                client: client)
            #expect(response.status == .ok)
        }
    }

    @Test func anInvalidMessageGetsABadRequestWithFcmErrorAndFieldViolation() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            let response = try await TestServer.send(
                #"{"message":{"topic":"news","data":{"from":"x"}}}"#, project: "test-project", token: token,
                client: client)
            #expect(response.status == .badRequest)
            let error = try #require(try response.json()["error"])
            #expect(error["code"] == .number(400))
            #expect(error["status"] == .string("INVALID_ARGUMENT"))
            let details = try #require(error["details"]?.arrayElements)
            #expect(details[0]["@type"] == .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"))
            #expect(details[0]["errorCode"] == .string("INVALID_ARGUMENT"))
            #expect(details[1]["@type"] == .string("type.googleapis.com/google.rpc.BadRequest"))
            #expect(details[1]["fieldViolations"]?.arrayElements?.first?["field"] == .string("message.data"))
            #expect(try await server.store.messageCount(projectID: "test-project") == 0)
        }
    }

    @Test func aWellFormedTokenNoDeviceRegisteredIsUnregistered() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            let unknown = "fGw0qy4TGgk:APA91bGtWGjuhp4WRhHXgbabIYp1jxEKI08ofj_v1bKhWAGJQ4e3arRCWzeTf"
            for dryRun in [false, true] {
                let body = #"{"message":{"token":"\#(unknown)"},"validate_only":\#(dryRun)}"#
                let response = try await TestServer.send(body, project: "test-project", token: token, client: client)
                #expect(response.status == .notFound)
                let error = try #require(try response.json()["error"])
                #expect(error["status"] == .string("NOT_FOUND"))
                #expect(error["details"]?.arrayElements?.first?["errorCode"] == .string("UNREGISTERED"))
            }
        }
    }

    @Test func aMalformedTokenIsInvalidArgumentAndStoresNothing() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            for malformed in ["not-a-token", "INVALID_TOKEN", "", "abc", "x:APA91b", "a b:APA91bx", "é:APA91bx"] {
                for dryRun in [false, true] {
                    let body = #"{"message":{"token":"\#(malformed)"},"validate_only":\#(dryRun)}"#
                    let response = try await TestServer.send(
                        body, project: "test-project", token: token, client: client)
                    #expect(response.status == .badRequest, "\(malformed)")
                    let error = try #require(try response.json()["error"])
                    #expect(error["status"] == .string("INVALID_ARGUMENT"))
                    #expect(error["message"] == .string("The registration token is not a valid FCM registration token"))
                    #expect(error["details"]?.arrayElements?.first?["errorCode"] == .string("INVALID_ARGUMENT"))
                }
            }
            #expect(try await server.store.messageCount(projectID: "test-project") == 0)
        }
    }

    @Test func C4_missingForgedAndExpiredTokensAreUnauthenticated() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            var forged = token
            forged.removeLast()
            forged += token.hasSuffix("A") ? "B" : "A"
            var middle = Array(token)
            middle[middle.count - 10] = middle[middle.count - 10] == "x" ? "y" : "x"
            for presented in [nil, "", "garbage", forged, String(middle), "ya29.h1.x.y"] {
                let response = try await TestServer.send(
                    #"{"message":{"topic":"a"}}"#, project: "test-project", token: presented, client: client)
                try expectUnauthenticated(response)
            }
            let good = try await TestServer.send(
                #"{"message":{"topic":"a"}}"#, project: "test-project", token: token, client: client)
            #expect(good.status == .ok)
            server.clock.advance(seconds: 3600)
            try expectUnauthenticated(
                try await TestServer.send(
                    #"{"message":{"topic":"a"}}"#, project: "test-project", token: token, client: client))
        }
    }

    @Test func C4_theBearerSchemeIsReadInAnyCase() {
        #expect(Authenticator.bearerToken("Bearer ya29.abc") == "ya29.abc")
        #expect(Authenticator.bearerToken("bEARER   ya29.abc") == "ya29.abc")
        for refused in [nil, "", "Bearer", "Bearer ", "Bearer    ", "Basic ya29.abc", "Bearerya29.abc", "Bearer\tya29"]
        {
            #expect(Authenticator.bearerToken(refused) == nil)
        }
    }

    @Test func C1_aTokenOfOneProjectIsPermissionDeniedOnAnother() async throws {
        let server = try await TestServer.make()
        _ = try await TestServer.addProject("other-project", to: server.store, clock: server.clock)
        try await server.test { client in
            let token = try await server.accessToken(client)
            for project in ["other-project", "no-such-project"] {
                let response = try await TestServer.send(
                    #"{"message":{"topic":"a"}}"#, project: project, token: token, client: client)
                #expect(response.status == .forbidden)
                #expect(try response.json()["error"]?["status"] == .string("PERMISSION_DENIED"))
            }
        }
    }

    @Test func C4_tokensOfARevokedKeyOrDeletedProjectStopWorking() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            // Used once, so that the token is remembered as verified.
            let used = try await TestServer.send(
                #"{"message":{"topic":"a"},"validate_only":true}"#, project: "test-project", token: token,
                client: client)
            #expect(used.status == .ok)
            _ = try await server.store.revokeServiceAccountKey(id: server.key.id, at: server.clock.now())
            try await server.node.directory.reload(from: server.store)
            try expectUnauthenticated(
                try await TestServer.send(
                    #"{"message":{"topic":"a"}}"#, project: "test-project", token: token, client: client))
        }
    }

    @Test func C4_aSelfSignedServiceAccountJWTIsAccepted() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let jwt = try server.assertion(claims: ["aud": .null, "sub": .string(server.key.clientEmail)])
            let response = try await TestServer.send(
                #"{"message":{"topic":"a"},"validate_only":true}"#, project: "test-project", token: jwt, client: client)
            #expect(response.status == .ok)
            let expired = try server.assertion(claims: [
                "iat": .number(Double(server.clock.now().seconds - 7200)),
                "exp": .number(Double(server.clock.now().seconds - 3600)),
            ])
            try expectUnauthenticated(
                try await TestServer.send(
                    #"{"message":{"topic":"a"}}"#, project: "test-project", token: expired, client: client))
        }
    }

    @Test func anOversizedBodyIsRefusedWith413() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            let body = #"{"message":{"topic":"a","data":{"k":""# + String(repeating: "x", count: 2 << 20) + #""}}}"#
            let response = try await TestServer.send(body, project: "test-project", token: token, client: client)
            #expect(response.status == .contentTooLarge)
        }
    }

    @Test func healthAndMetricsAreServed() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            let token = try await server.accessToken(client)
            _ = try await TestServer.send(
                #"{"message":{"topic":"a"}}"#, project: "test-project", token: token, client: client)
            _ = try await TestServer.send(
                #"{"message":{"topic":"a b"}}"#, project: "test-project", token: token, client: client)
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains(#"herald_messages_accepted_total{project="test-project"} 1"#))
            #expect(metrics.contains(#"herald_errors_total{code="INVALID_ARGUMENT"} 1"#))
            #expect(metrics.contains("herald_http_requests_total"))
        }
    }

    private func expectUnauthenticated(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        #expect(response.status == .unauthorized, sourceLocation: sourceLocation)
        let error = try response.json()["error"]
        #expect(error?["status"] == .string("UNAUTHENTICATED"), sourceLocation: sourceLocation)
        #expect(error?["code"] == .number(401), sourceLocation: sourceLocation)
        #expect(error?["details"] == nil, sourceLocation: sourceLocation)
    }
}
