import Foundation
import HeraldClient
import HeraldCore
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Sends through the HTTP v1 API reaching devices over real TLS sockets (SEMANTICS L1–L4).
@Suite(.serialized) struct DeliveryEndToEndTests {
    @Test func L2_aConnectedDeviceReceivesAMessageSentWithTheV1API() async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                try await GatewayHarness.eventually { await client.isConnected }
                let id = try await harness.send(
                    #"{"token":"\#(token)","data":{"greeting":"hello"},"notification":{"title":"T","body":"B"},"android":{"collapse_key":"k","priority":"high"}}"#
                )
                guard case .message(let message) = try await firstEvent(client) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.messageID == id)
                #expect(message.data == ["greeting": "hello"])
                #expect(message.notification == ["title": "T", "body": "B"])
                #expect(message.from == String(harness.project.number))
                // SEMANTICS D3: a notification message ignores collapse_key and collapses under the app id.
                #expect(message.collapseKey == "com.example.test")
                #expect(message.priority == "high")
                group.cancelAll()
            }
        }
    }

    @Test(arguments: [Platform.web, .apple])
    func P1_webAndAppleRegistrationsReceiveTheirPlatformsForm(_ platform: Platform) async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration(platform: platform))
            let token = try await client.register()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                let id = try await harness.send(#"{"token":"\#(token)","data":{"k":"v"}}"#)
                guard case .message(let message) = try await firstEvent(client) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.messageID == id)
                #expect(message.data == ["k": "v"])
                if platform == .web {
                    // Decrypted from the aesgcm Web Push payload.
                    #expect(message.platformPayload["fcmMessageId"] == .string(id))
                }
                group.cancelAll()
            }
        }
    }

    @Test func L4_anOfflineDeviceGetsItsQueuedMessagesInOrderWhenItConnects() async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            var ids: [String] = []
            for n in 0..<5 { ids.append(try await harness.send(#"{"token":"\#(token)","data":{"n":"\#(n)"}}"#)) }
            let received = Collected()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                group.addTask {
                    for await event in client.events {
                        if case .message(let message) = event { await received.append(message.messageID) }
                    }
                }
                try await GatewayHarness.eventually { await received.items.count == 5 }
                #expect(await received.items == ids)
                // Each is acknowledged once the app moved on from it.
                try await GatewayHarness.eventually {
                    let registration = try await harness.node.store.registration(token: token)
                    return try await harness.node.store.queuedCount(androidID: registration!.androidID) == 0
                }
                group.cancelAll()
            }
        }
    }

    @Test func L4_anUnacknowledgedMessageIsSentAgainAfterAReconnectAndTheAppSeesItOnce() async throws {
        try await GatewayHarness.with { harness in
            let identity = harness.directory + "/device.json"
            let first = HeraldClient(configuration: harness.clientConfiguration(identity: identity))
            let token = try await first.register()
            let saved = try #require(try DeviceIdentity.load(from: identity))
            let device = Device(
                androidID: saved.androidID, securityToken: saved.securityToken, createdAt: Timestamp(seconds: 0))
            let id = try await harness.send(#"{"token":"\#(token)","data":{"once":"yes"}}"#)
            // On the wire: received, not acknowledged, connection dropped; it comes again.
            for _ in 0..<2 {
                try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                    let response = try #require(try await connection.login(device))
                    #expect(!response.hasError)
                    let message = try #require(try await connection.receiveMessage())
                    #expect(message.persistentID == id)
                }
            }
            // The app handled it before its acknowledgement was lost: the SDK drops the copy.
            var handled = saved
            handled.handledMessageIDs = [id]
            try handled.save(to: identity)
            let second = HeraldClient(configuration: harness.clientConfiguration(identity: identity))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await second.run() }
                try await GatewayHarness.eventually {
                    try await harness.node.store.queuedCount(androidID: device.androidID) == 0
                }
                let next = try await harness.send(#"{"token":"\#(token)","data":{"after":"yes"}}"#)
                guard case .message(let message) = try await firstEvent(second) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.messageID == next)
                group.cancelAll()
            }
        }
    }

    @Test func receivedPersistentIDsAtLoginCountAsAcknowledged() async throws {
        try await GatewayHarness.with { harness in
            let (device, token) = try await harness.makeDevice()
            let id = try await harness.send(#"{"token":"\#(token)","data":{"a":"b"}}"#)
            #expect(try await harness.node.store.queuedCount(androidID: device.androidID) == 1)
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                _ = try await connection.login(device, received: [id])
            }
            try await GatewayHarness.eventually {
                try await harness.node.store.queuedCount(androidID: device.androidID) == 0
            }
        }
    }

    @Test func C3_aTokenOfAnotherProjectIsSenderIDMismatch() async throws {
        try await GatewayHarness.with { harness in
            let store = harness.node.store
            let other = Project.make(id: "other-project", createdAt: harness.node.clock.now())
            let key = ServiceAccountKey(
                id: "k-other", projectID: other.id, clientEmail: "x@y", publicKeyPEM: "", createdAt: other.createdAt)
            try await store.createProject(other, firstKey: key)
            let (device, _) = try await harness.makeDevice()
            let token = Registration.makeToken()
            try await store.createRegistration(
                Registration(
                    token: token, kind: .app, projectID: other.id, sender: String(other.number), appID: "a",
                    subtype: nil, platform: .android, androidID: device.androidID, createdAt: other.createdAt))
            do {
                _ = try await harness.send(#"{"token":"\#(token)","data":{"a":"b"}}"#)
                Issue.record("expected a failure")
            } catch {
                #expect("\(error)".contains("SENDER_ID_MISMATCH"))
                #expect("\(error)".contains("403"))
            }
        }
    }
}

actor Collected {
    var items: [String] = []
    func append(_ item: String) { items.append(item) }
}
