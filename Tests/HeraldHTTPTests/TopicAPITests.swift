import Foundation
import HeraldClient
import HeraldCore
import HeraldTestSupport
import HeraldTools
import Testing

/// Topic management and device groups over HTTP, and sends to them reaching devices.
@Suite(.serialized) struct TopicAPITests {
    func json(_ result: HTTPResult) throws -> JSONValue { try JSONParser.parse(result.body) }

    @Test func theV1ResourceCreatesGetsListsAndDeletesSubscriptions() async throws {
        try await GatewayHarness.with { harness in
            let (_, token) = try await harness.makeDevice()
            let base = "/v1/projects/\(harness.project.id)/registrations/\(token)/topicSubscriptions"
            let created = try await harness.get(base + "?topic_name=news", method: .POST, body: "{}")
            #expect(created.status == 200)
            #expect(
                try json(created)["name"]
                    == .string("projects/\(harness.project.id)/registrations/\(token)/topicSubscriptions/news"))
            #expect(try await harness.get(base + "?topicName=news", method: .POST, body: "{}").status == 409)
            _ = try await harness.get(base + "?topic_name=%2Ftopics%2Fsports", method: .POST, body: "{}")
            #expect(try await harness.get(base + "/news").status == 200)
            #expect(try await harness.get(base + "/weather").status == 404)
            let page = try json(try await harness.get(base + "?pageSize=1"))
            #expect(page["topicSubscriptions"]?.arrayElements?.first?["topicName"] == .string("news"))
            let next = try #require(page["nextPageToken"]?.stringValue)
            let second = try json(try await harness.get(base + "?pageSize=1&pageToken=\(next)"))
            #expect(second["topicSubscriptions"]?.arrayElements?.first?["topicName"] == .string("sports"))
            #expect(try await harness.get(base + "/news", method: .DELETE).status == 200)
            #expect(try await harness.get(base + "/news", method: .DELETE).status == 404)
            #expect(try await harness.get(base + "/news?allow_missing=true", method: .DELETE).status == 200)
            #expect(try await harness.get(base + "?topic_name=bad%20name", method: .POST, body: "{}").status == 400)
        }
    }

    @Test func onlyTheOwningProjectMayChangeATokensSubscriptions() async throws {
        try await GatewayHarness.with { harness in
            let store = harness.node.store
            let other = Project.make(id: "other-project", createdAt: harness.node.clock.now())
            try await store.createProject(
                other,
                firstKey: ServiceAccountKey(
                    id: "k2", projectID: other.id, clientEmail: "e", publicKeyPEM: "", createdAt: other.createdAt))
            let (device, _) = try await harness.makeDevice()
            let foreign = Registration.makeToken()
            try await store.createRegistration(
                Registration(
                    token: foreign, kind: .app, projectID: other.id, sender: "2", appID: "a", subtype: nil,
                    platform: .android,
                    androidID: device.androidID, createdAt: other.createdAt))
            let path = "/v1/projects/\(harness.project.id)/registrations/\(foreign)/topicSubscriptions?topic_name=x"
            #expect(try await harness.get(path, method: .POST, body: "{}").status == 403)
            let batch = try await harness.get(
                "/iid/v1:batchAdd", method: .POST, body: #"{"to":"/topics/x","registration_tokens":["\#(foreign)"]}"#)
            #expect(try json(batch)["results"]?.arrayElements?.first?["error"] == .string("PERMISSION_DENIED"))
            #expect(try await store.subscriptions(token: foreign).isEmpty)
        }
    }

    @Test func theInstanceIDBatchAnswersOneResultPerTokenInOrder() async throws {
        try await GatewayHarness.with { harness in
            let (_, token) = try await harness.makeDevice()
            let body =
                #"{"to":"/topics/deals","registration_tokens":["\#(token)","dW5rbm93bg:APA91bUnknown","bad token"]}"#
            let added = try json(try await harness.get("/iid/v1:batchAdd", method: .POST, body: body))
            #expect(
                added["results"]
                    == .array([
                        .object([]), .stringObject([("error", "NOT_FOUND")]),
                        .stringObject([("error", "INVALID_ARGUMENT")]),
                    ]))
            let info = try json(try await harness.get("/iid/info/\(token)?details=true"))
            #expect(info["authorizedEntity"] == .string(String(harness.project.number)))
            #expect(info["platform"] == .string("ANDROID"))
            #expect(info["rel"]?["topics"]?["deals"]?["addDate"] != nil)
            let tooMany = Array(repeating: #""x""#, count: 1001).joined(separator: ",")
            #expect(
                try await harness.get(
                    "/iid/v1:batchAdd", method: .POST, body: #"{"to":"/topics/a","registration_tokens":[\#(tooMany)]}"#
                ).status == 400)
            let removed = try json(
                try await harness.get(
                    "/iid/v1:batchRemove", method: .POST,
                    body: #"{"to":"/topics/deals","registration_tokens":["\#(token)"]}"#))
            #expect(removed["results"] == .array([.object([])]))
            #expect(try await harness.node.store.subscriptions(token: token).isEmpty)
        }
    }

    @Test func theServerKeyAuthenticatesTheLegacySurfacesAndNothingElse() async throws {
        try await GatewayHarness.with { harness in
            let (_, token) = try await harness.makeDevice()
            let result = try await HTTPConnection.with(host: "127.0.0.1", port: harness.httpPort) { connection in
                try await connection.request(
                    .GET, "/iid/info/\(token)", headers: [("Authorization", "key=\(harness.project.serverKey)")])
            }
            #expect(result.status == 200)
            let send = try await HTTPConnection.with(host: "127.0.0.1", port: harness.httpPort) { connection in
                try await connection.request(
                    .POST, "/v1/projects/\(harness.project.id)/messages:send",
                    headers: [("Authorization", "key=\(harness.project.serverKey)")],
                    body: Array(#"{"message":{"topic":"a"}}"#.utf8))
            }
            #expect(send.status == 401)
        }
    }

    @Test func deviceGroupsAreManagedAndASendToTheirKeyReachesEveryMember() async throws {
        try await GatewayHarness.with { harness in
            let clients = (0..<2).map { _ in HeraldClient(configuration: harness.clientConfiguration()) }
            var tokens: [String] = []
            for client in clients { tokens.append(try await client.register()) }
            let create = try json(
                try await harness.get(
                    "/fcm/notification", method: .POST,
                    body:
                        #"{"operation":"create","notification_key_name":"family","registration_ids":["\#(tokens[0])"]}"#
                ))
            let key = try #require(create["notification_key"]?.stringValue)
            let duplicate = try await harness.get(
                "/fcm/notification", method: .POST,
                body: #"{"operation":"create","notification_key_name":"family","registration_ids":["\#(tokens[1])"]}"#)
            #expect(duplicate.status == 400)
            _ = try await harness.get(
                "/fcm/notification", method: .POST,
                body: #"{"operation":"add","notification_key":"\#(key)","registration_ids":["\#(tokens[1])"]}"#)
            #expect(
                try json(try await harness.get("/fcm/notification?notification_key_name=family"))["notification_key"]
                    == .string(key))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in clients { group.addTask { try await client.run() } }
                let id = try await harness.send(#"{"token":"\#(key)","data":{"to":"group"}}"#)
                for client in clients {
                    guard case .message(let message) = try await firstEvent(client) else {
                        Issue.record("expected the group message")
                        return
                    }
                    #expect(message.messageID == id)
                }
                group.cancelAll()
            }
            let tooMany = (0..<21).map { _ in #""\#(tokens[0])""# }.joined(separator: ",")
            #expect(
                try await harness.get(
                    "/fcm/notification", method: .POST,
                    body: #"{"operation":"create","notification_key_name":"big","registration_ids":[\#(tooMany)]}"#
                ).status == 400)
            for token in tokens {
                _ = try await harness.get(
                    "/fcm/notification", method: .POST,
                    body: #"{"operation":"remove","notification_key":"\#(key)","registration_ids":["\#(token)"]}"#)
            }
            #expect(try await harness.get("/fcm/notification?notification_key_name=family").status == 404)
        }
    }

    @Test func aMalformedTokenIsInvalidArgumentOnEverySurfaceThatTakesAToken() async throws {
        try await GatewayHarness.with { harness in
            let (_, token) = try await harness.makeDevice()
            for malformed in ["not-a-token", "INVALID_TOKEN"] {
                let resource = try await harness.get(
                    "/v1/projects/\(harness.project.id)/registrations/\(malformed)/topicSubscriptions?topic_name=news",
                    method: .POST, body: "{}")
                #expect(resource.status == 400)
                #expect(try json(resource)["error"]?["status"] == .string("INVALID_ARGUMENT"))
                let info = try await harness.get("/iid/info/\(malformed)")
                #expect(info.status == 400)
                #expect(try json(info)["error"] == .string("InvalidToken"))
                let group = try await harness.get(
                    "/fcm/notification", method: .POST,
                    body:
                        #"{"operation":"create","notification_key_name":"g","registration_ids":["\#(token)","\#(malformed)"]}"#
                )
                #expect(group.status == 400)
            }
            let unknown = try await harness.get("/iid/info/dW5rbm93bg:APA91bUnknown")
            #expect(unknown.status == 404)
            #expect(try await harness.node.store.subscriptions(token: token).isEmpty)
        }
    }
}
