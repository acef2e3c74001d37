import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldHTTP

/// `GET /v1/projects/{p}/messages/{id}` and `…/events` (SEMANTICS E3): a send's status and
/// events, with a send's credentials; another project's message is not found.
@Suite struct MessageStatusAPITests {
    func get(_ path: String, token: String?, _ client: any TestClientProtocol) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: path, method: .get, headers: headers)
    }

    @Test func E3_aSendToATokenIsDeliveringUntilAcknowledgedThenDoneWithItsEvents() async throws {
        let server = try await TestServer.make(store: try SQLiteStore(dataDirectory: temporaryDirectory()))
        let registrationToken = try await registeredToken(server.store, projectID: "test-project")
        let registration = try #require(try await server.store.registration(token: registrationToken))
        // Connected lately: not inactive (SEMANTICS L5).
        try await server.store.recordConnection(androidID: registration.androidID, at: server.clock.now())
        try await server.test { client in
            let token = try await server.accessToken(client)
            let sent = try await TestServer.send(
                #"{"message":{"token":"\#(registrationToken)","data":{"k":"v"},"fcm_options":{"analytics_label":"spring"}}}"#,
                project: "test-project", token: token, client: client)
            let name = try #require(try sent.json()["name"]?.stringValue)
            let id = String(name.dropFirst("projects/test-project/messages/".count))
            // The id holds a `%`: escaped as `%25` or sent as it is, it names the same message.
            let escaped = id.replacingOccurrences(of: "%", with: "%25")
            for path in ["/v1/projects/test-project/messages/\(id)", "/v1/projects/test-project/messages/\(escaped)"] {
                let status = try await get(path, token: token, client)
                #expect(status.status == .ok)
                let body = try status.json()
                #expect(body["name"] == .string(name) && body["state"] == .string("delivering"))
                #expect(body["target"]?["kind"] == .string("token"))
                #expect(body["target"]?["value"] == .string(Registration.redacted(registrationToken)))
                #expect(body["analyticsLabel"] == .string("spring") && body["waiting"] == .number(1))
            }
            try await server.store.acknowledge(androidID: registration.androidID, persistentIDs: [id])
            let done = try await get("/v1/projects/test-project/messages/\(escaped)", token: token, client).json()
            #expect(done["state"] == .string("done") && done["counts"]?["delivered"] == .number(1))
            let events = try await get("/v1/projects/test-project/messages/\(escaped)/events", token: token, client)
            let list = try #require(try events.json()["events"]?.arrayElements)
            #expect(list.map { $0["type"] } == [.string("accepted"), .string("delivered")])
            #expect(list[1]["token"] == .string(Registration.redacted(registrationToken)))
            #expect(list[1]["message_id"] == .string(id) && list[1]["app"] == .string("com.example.app"))
            // A page of one, then the next from its token.
            let first = try await get(
                "/v1/projects/test-project/messages/\(escaped)/events?pageSize=1", token: token, client
            ).json()
            let next = try #require(first["nextPageToken"]?.stringValue)
            let second = try await get(
                "/v1/projects/test-project/messages/\(escaped)/events?pageSize=1&pageToken=\(next)", token: token,
                client
            ).json()
            #expect(second["events"]?.arrayElements?.map { $0["type"] } == [.string("delivered")])
            #expect(second["nextPageToken"] == nil)
        }
    }

    @Test func E3_anotherProjectsMessageAndNoCredentialsAreRefusedInFCMsShape() async throws {
        let server = try await TestServer.make()
        _ = try await TestServer.addProject("other-project", to: server.store, clock: server.clock)
        try await server.test { client in
            let token = try await server.accessToken(client)
            let sent = try await TestServer.send(
                #"{"message":{"topic":"news"}}"#, project: "test-project", token: token, client: client)
            let id = try #require(try sent.json()["name"]?.stringValue?.split(separator: "/").last)
            let mine = try await get("/v1/projects/test-project/messages/\(id)", token: token, client).json()
            #expect(mine["target"]?["kind"] == .string("topic") && mine["target"]?["value"] == .string("news"))
            #expect(mine["fanout"]?["finished"] != nil)
            let unknown = try await get("/v1/projects/test-project/messages/0:1%ab", token: token, client)
            #expect(unknown.status == .notFound)
            #expect(try unknown.json()["error"]?["status"] == .string("NOT_FOUND"))
            let anonymous = try await get("/v1/projects/test-project/messages/\(id)", token: nil, client)
            #expect(anonymous.status == .unauthorized)
            let elsewhere = try await get("/v1/projects/other-project/messages/\(id)", token: token, client)
            #expect(elsewhere.status == .forbidden)
            let badPage = try await get(
                "/v1/projects/test-project/messages/\(id)/events?pageToken=x", token: token, client)
            #expect(badPage.status == .badRequest)
        }
    }
}

/// A send refused for a quota is a `refused` event with the rule's id (SEMANTICS E1).
@Suite struct RefusedEventTests {
    @Test func E1_aSendRefusedForTheDownstreamQuotaIsARefusedEventNamingT1() async throws {
        let server = try await TestServer.make(downstreamPerMinute: 1)
        try await server.test { client in
            let token = try await server.accessToken(client)
            var statuses: [Int] = []
            for _ in 0..<3 {
                let response = try await TestServer.send(
                    #"{"message":{"topic":"news"}}"#, project: "test-project", token: token, client: client)
                statuses.append(response.status.code)
            }
            #expect(statuses == [200, 429, 429])
        }
        try await server.node.environment.errors.flush(to: server.store)
        let refused = try await server.store.events(
            projectID: "test-project", after: 0, limit: 10, filter: EventFilter(types: [.refused]))
        #expect(refused.map(\.reason) == ["T1", "T1"] && refused.allSatisfy { $0.messageID.isEmpty })
        #expect(refused.first?.json(id: "")["type"] == .string("refused"))
        // A flush with nothing new writes nothing more.
        try await server.node.environment.errors.flush(to: server.store)
        #expect(
            try await server.store.events(
                projectID: "test-project", after: 0, limit: 10, filter: EventFilter(types: [.refused])
            ).count == 2)
    }
}
