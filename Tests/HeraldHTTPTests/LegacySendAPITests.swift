import Crypto
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldHTTP

/// `POST /fcm/send`, `/gcm/send` and `/fcm/connect/subscribe`: the legacy protocol's
/// authentication, answers and errors, over the same dispatcher as the v1 API.
@Suite struct LegacySendAPITests {
    static func post(
        _ body: String, key: String?, path: String = "/fcm/send", contentType: String = "application/json",
        client: any TestClientProtocol
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let key { headers[.authorization] = "key=\(key)" }
        return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    @Test func C5_onlyTheProjectsServerKeyIsAccepted() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            for key in [nil, "wrong", server.project.apiKey] {
                let response = try await Self.post(#"{"to":"/topics/news"}"#, key: key, client: client)
                #expect(response.status == .unauthorized)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            }
            let response = try await Self.post(#"{"to":"/topics/news"}"#, key: server.project.serverKey, client: client)
            #expect(response.status == .ok)
        }
    }

    @Test func C3_L6_eachTokenIsAnsweredInOrderAndOnlyLiveOnesAreStored() async throws {
        let server = try await TestServer.make()
        let (other, _, _) = try await TestServer.addProject("other-project", to: server.store, clock: server.clock)
        let live = try await registeredToken(server.store, projectID: server.project.id)
        let foreign = try await registeredToken(server.store, projectID: other.id)
        let uninstalled = try await registeredToken(server.store, projectID: server.project.id, deleted: true)
        let unknown = Registration.makeToken()
        try await server.test { client in
            let body =
                #"{"registration_ids":["\#(live)","bad token","\#(unknown)","\#(foreign)","\#(uninstalled)"],"#
                + #""data":{"k":"v"}}"#
            let response = try await Self.post(body, key: server.project.serverKey, client: client)
            #expect(response.status == .ok)
            let json = try response.json()
            #expect(json["success"] == .number(1))
            #expect(json["failure"] == .number(4))
            #expect(json["canonical_ids"] == .number(0))
            #expect(json["multicast_id"]?.numberValue.map { $0 > 0 } == true)
            let results = try #require(json["results"]?.arrayElements)
            #expect(
                results.map { $0["error"]?.stringValue } == [
                    nil, "InvalidRegistration", "NotRegistered", "MismatchSenderId", "NotRegistered",
                ])
            let id = try #require(results[0]["message_id"]?.stringValue)
            #expect(try await server.store.message(id: id)?.target == live)
            #expect(try await server.store.messageCount(projectID: server.project.id) == 1)
        }
    }

    @Test func M2_aBrokenMessageRuleFailsEveryTokenAlikeAndStoresNothing() async throws {
        let server = try await TestServer.make()
        let live = try await registeredToken(server.store, projectID: server.project.id)
        try await server.test { client in
            let response = try await Self.post(
                #"{"registration_ids":["\#(live)","bad token"],"data":{"from":"x"}}"#, key: server.project.serverKey,
                client: client)
            let results = try #require(try response.json()["results"]?.arrayElements)
            #expect(results.map { $0["error"]?.stringValue } == ["InvalidDataKey", "InvalidDataKey"])
            #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
        }
    }

    @Test func T6_aDeviceOverItsRateIsDeviceMessageRateExceeded() async throws {
        let server = try await TestServer.make()
        var settings = server.project.settings
        settings.devicePerMinute = 1
        _ = try await server.store.updateSettings(settings, projectID: server.project.id)
        let token = try await registeredToken(server.store, projectID: server.project.id)
        try await server.test { client in
            var errors: [String?] = []
            for _ in 0..<2 {
                let response = try await Self.post(
                    #"{"to":"\#(token)","data":{"k":"v"}}"#, key: server.project.serverKey, client: client)
                errors.append(try response.json()["results"]?.arrayElements?.first?["error"]?.stringValue)
            }
            #expect(errors == [nil, "DeviceMessageRateExceeded"])
        }
    }

    @Test func T3_aTopicSendAnswersANumericIdUntilTheProjectsFanoutsAreFull() async throws {
        let server = try await TestServer.make()
        var settings = server.project.settings
        settings.maxFanouts = 1
        _ = try await server.store.updateSettings(settings, projectID: server.project.id)
        try await server.test { client in
            // The fanout engine does not run here: every job waits.
            var answers: [JSONValue] = []
            for _ in 0...FanoutEngine.waitingFactor {
                let response = try await Self.post(
                    #"{"condition":"'a' in topics","data":{"k":"v"}}"#, key: server.project.serverKey, client: client)
                answers.append(try response.json())
            }
            #expect(answers.dropLast().allSatisfy { $0["message_id"]?.numberValue != nil })
            #expect(answers.last == .object([("error", .string("TopicsMessageRateExceeded"))]))
        }
    }

    @Test func aDeviceGroupSendAnswersItsCounts() async throws {
        let server = try await TestServer.make()
        let members = [
            try await registeredToken(server.store, projectID: server.project.id),
            try await registeredToken(server.store, projectID: server.project.id),
        ]
        let key = "APA91b" + SecureRandom.token(bytes: 32)
        try await server.store.createDeviceGroup(
            DeviceGroup(projectID: server.project.id, name: "family", notificationKey: key, members: members))
        try await server.test { client in
            let response = try await Self.post(
                #"{"to":"\#(key)","data":{"k":"v"}}"#, key: server.project.serverKey, client: client)
            #expect(try response.json() == .object([("success", .number(2)), ("failure", .number(0))]))
        }
    }

    @Test func T1_overTheProjectsQuotaIs429WithRetryAfterAndNothingIsSent() async throws {
        let server = try await TestServer.make(downstreamPerMinute: 2)
        let tokens = [
            try await registeredToken(server.store, projectID: server.project.id),
            try await registeredToken(server.store, projectID: server.project.id),
            try await registeredToken(server.store, projectID: server.project.id),
        ]
        try await server.test { client in
            let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
            let response = try await Self.post(
                #"{"registration_ids":[\#(list)],"data":{"k":"v"}}"#, key: server.project.serverKey, client: client)
            #expect(response.status == .tooManyRequests)
            #expect(response.headers[.retryAfter].flatMap { Int($0) }.map { $0 > 0 } == true)
            #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
        }
    }

    @Test func aMalformedRequestIs400WithAPlainTextReasonAndChangesNothing() async throws {
        let server = try await TestServer.make()
        try await server.test { client in
            for body in [
                #"{"to":"/topics/a","#, #"{"to":"/topics/a","time_to_live":"soon"}"#, #"{"registration_ids":[]}"#,
            ] {
                let response = try await Self.post(body, key: server.project.serverKey, client: client)
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                #expect(response.body.readableBytes > 0)
            }
            #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
        }
    }

    @Test func thePlainTextFormIsAnsweredInPlainText() async throws {
        let server = try await TestServer.make()
        let token = try await registeredToken(server.store, projectID: server.project.id)
        try await server.test { client in
            let form = "application/x-www-form-urlencoded;charset=UTF-8"
            let sent = try await Self.post(
                "registration_id=\(token)&data.k=v", key: server.project.serverKey, path: "/gcm/send",
                contentType: form, client: client)
            let text = String(buffer: sent.body)
            #expect(text.hasPrefix("id=0:"))
            let id = String(text.dropFirst(3).prefix { $0 != "\n" })
            #expect(try await server.store.message(id: id)?.body == #"{"data":{"k":"v"}}"#)
            let missing = try await Self.post(
                "data.k=v", key: server.project.serverKey, contentType: form, client: client)
            #expect(String(buffer: missing.body) == "Error=MissingRegistration\n")
        }
    }

    @Test func L1_aDryRunIsAnsweredAndStoresNothing() async throws {
        let server = try await TestServer.make()
        let token = try await registeredToken(server.store, projectID: server.project.id)
        try await server.test { client in
            let response = try await Self.post(
                #"{"to":"\#(token)","dry_run":true,"data":{"k":"v"}}"#, key: server.project.serverKey, client: client)
            #expect(try response.json()["results"]?.arrayElements?.first?["message_id"] == .string("fake_message_id"))
            #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
        }
    }

    @Test func aLegacyWebSubscriptionRidesAPushChannelOfThisServer() async throws {
        let server = try await TestServer.make()
        let device = Device.make(at: Timestamp(milliseconds: 0))
        try await server.store.createDevice(device)
        let channel = Registration(
            token: Registration.makeToken(), kind: .webChannel, projectID: nil,
            sender: WebChannelBinding.firebaseDefaultKey,
            appID: "org.chromium.linux", subtype: "wp:receiver", platform: .web, androidID: device.androidID,
            createdAt: Timestamp(milliseconds: 0))
        try await server.store.createRegistration(channel)
        let publicKey = Base64URL.encode(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        let auth = Base64URL.encode(Array("0123456789abcdef".utf8))
        try await server.test { client in
            func subscribe(entity: String, endpoint: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/fcm/connect/subscribe", method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(
                        string: "authorized_entity=\(entity)&endpoint=https%3A%2F%2Ffcm.googleapis.com%2Ffcm%2Fsend%2F"
                            + "\(endpoint)&encryption_key=\(publicKey)&encryption_auth=\(auth)"))
            }
            let response = try await subscribe(entity: String(server.project.number), endpoint: channel.token)
            #expect(response.status == .ok)
            let json = try response.json()
            #expect(json["pushSet"]?.stringValue?.isEmpty == false)
            let token = try #require(json["token"]?.stringValue)
            let registration = try #require(try await server.store.registration(token: token))
            #expect(registration.projectID == server.project.id)
            #expect(registration.androidID == device.androidID)
            #expect(registration.webKeys?.coding == "aesgcm")
            #expect(
                try await subscribe(entity: String(server.project.number), endpoint: "unknown").status == .badRequest)
            #expect(try await subscribe(entity: "12345", endpoint: channel.token).status == .badRequest)
        }
    }

    @Test func serverErrorsAreUnavailableOrInternalServerErrorWithRetryAfter() {
        #expect(HeraldError.unavailable(retryAfterSeconds: 3).legacyResult == "Unavailable")
        #expect(HeraldError.internal().legacyResult == "InternalServerError")
        let overloaded = LegacySendRoutes.failure(.unavailable(retryAfterSeconds: 3))
        #expect(overloaded.status == .serviceUnavailable)
        #expect(overloaded.headers[.retryAfter] == "3")
        let failed = LegacySendRoutes.failure(.internal())
        #expect(failed.status == .internalServerError)
        #expect(failed.headers[.retryAfter] == "1")
    }
}
