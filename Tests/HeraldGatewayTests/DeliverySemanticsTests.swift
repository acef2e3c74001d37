import Foundation
import HeraldClient
import HeraldCore
import HeraldProtocol
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Testing

/// SEMANTICS D1–D6, L5–L7, M4 and P1–P3 through the real store and the real gateway.
@Suite(.serialized) struct DeliverySemanticsTests {
    func run(_ client: HeraldClient, _ body: @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            defer { group.cancelAll() }
            try await body()
        }
    }

    func data(_ event: ClientEvent?) -> [String: String]? {
        if case .message(let message)? = event { return message.data }
        return nil
    }

    @Test func D1_theDeviceFirstLearnsThatMessagesWereDeletedWhenTooManyPiledUp() async throws {
        try await GatewayHarness.with(settings: { $0.maxPending = 3 }) { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            for n in 0..<4 { _ = try await harness.send(#"{"token":"\#(token)","data":{"n":"\#(n)"}}"#) }
            let after = try await harness.send(#"{"token":"\#(token)","data":{"n":"after"}}"#)
            try await run(client) {
                let events = await nextEvents(client, 2)
                #expect(events.first == .deletedMessages(count: 4))
                guard case .message(let message)? = events.last else {
                    Issue.record("expected the message sent after the overflow")
                    return
                }
                #expect(message.messageID == after)
            }
        }
    }

    @Test func D2_aNewerMessageReplacesAnUndeliveredOneWithTheSameKey() async throws {
        try await GatewayHarness.with(settings: { $0.maxCollapseKeys = 2 }) { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            for (value, key) in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("c1", "c")] {
                _ = try await harness.send(
                    #"{"token":"\#(token)","data":{"v":"\#(value)"},"android":{"collapse_key":"\#(key)"}}"#)
            }
            try await run(client) {
                // a2 replaced a1; c1 needed room for a third key, so the oldest (b) was evicted.
                let events = await nextEvents(client, 2)
                #expect(events.map(data) == [["v": "a2"], ["v": "c1"]])
            }
            let day = CalendarDay(harness.node.clock.now())
            let row = try await harness.node.store.deliveryReport(
                projectID: harness.project.id, appID: "com.example.test", from: day, through: day
            ).first
            #expect(row?[.collapsed] == 1)
            #expect(row?[.droppedTooManyPending] == 1)
        }
    }

    @Test func D4_aDozingDeviceGetsHighPriorityAtOnceAndNormalOnesWhenItWakes() async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            await client.setDozing(true)
            try await run(client) {
                try await GatewayHarness.eventually { await client.isConnected }
                _ = try await harness.send(#"{"token":"\#(token)","data":{"p":"normal"}}"#)
                _ = try await harness.send(#"{"token":"\#(token)","data":{"p":"high"},"android":{"priority":"high"}}"#)
                #expect(data(try await firstEvent(client)) == ["p": "high"])
                await client.setDozing(false)
                #expect(data(try await firstEvent(client)) == ["p": "normal"])
            }
        }
    }

    @Test func D5_aMessagePastItsTTLIsNeverDeliveredAndIsSweptAsExpired() async throws {
        let clock = ManualClock(SystemClock().now())
        try await GatewayHarness.with(clock: clock) { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            _ = try await harness.send(#"{"token":"\#(token)","data":{"short":"lived"},"android":{"ttl":"60s"}}"#)
            let kept = try await harness.send(#"{"token":"\#(token)","data":{"long":"lived"}}"#)
            clock.advance(seconds: 61)
            let sweeper = ExpirySweeper(
                store: harness.node.store, clock: clock, intervalSeconds: 60, logger: .init(label: "t"))
            #expect(try await sweeper.sweep() == 1)
            try await run(client) {
                guard case .message(let message) = try await firstEvent(client) else {
                    Issue.record("expected the long-lived message")
                    return
                }
                #expect(message.messageID == kept)
            }
            let day = CalendarDay(clock.now())
            let row = try await harness.node.store.deliveryReport(
                projectID: harness.project.id, appID: nil, from: day, through: day
            ).first
            #expect(row?[.expired] == 1)
        }
    }

    @Test func D6_aTTLZeroMessageReachesAConnectedDeviceAndIsDroppedForAnOfflineOne() async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            let registration = try #require(try await harness.node.store.registration(token: token))
            _ = try await harness.send(#"{"token":"\#(token)","data":{"when":"offline"},"android":{"ttl":"0s"}}"#)
            #expect(try await harness.node.store.queuedCount(androidID: registration.androidID) == 0)
            try await run(client) {
                try await GatewayHarness.eventually { await client.isConnected }
                _ = try await harness.send(#"{"token":"\#(token)","data":{"when":"online"},"android":{"ttl":"0s"}}"#)
                #expect(data(try await firstEvent(client)) == ["when": "online"])
            }
            #expect(try await harness.node.store.queuedCount(androidID: registration.androidID) == 0)
            let day = CalendarDay(harness.node.clock.now())
            let row = try await harness.node.store.deliveryReport(
                projectID: harness.project.id, appID: "com.example.test", from: day, through: day
            ).first
            #expect(row?[.accepted] == 2)
            #expect(row?[.expired] == 1)
            #expect(row?[.delivered] == 1)
        }
    }

    @Test func L5_sendsToAnInactiveDeviceAreDiscardedAndItLearnsSoWhenItReturns() async throws {
        let clock = ManualClock(SystemClock().now())
        try await GatewayHarness.with(clock: clock) { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            clock.advance(seconds: 32 * 86400)
            _ = try await harness.send(#"{"token":"\#(token)","data":{"into":"the void"}}"#)
            _ = try await harness.send(#"{"token":"\#(token)","data":{"into":"the void"}}"#)
            let registration = try #require(try await harness.node.store.registration(token: token))
            let queued = try await harness.node.store.pendingMessages(
                androidID: registration.androidID, after: 0, limit: 10, now: clock.now())
            #expect(queued.map(\.deletedCount) == [2])
            try await run(client) {
                let event = try await firstEvent(client)
                #expect(event == .deletedMessages(count: 2))
            }
            let day = CalendarDay(clock.now())
            let row = try await harness.node.store.deliveryReport(
                projectID: harness.project.id, appID: "com.example.test", from: day, through: day
            ).first
            #expect(row?[.droppedDeviceInactive] == 2)
            #expect(row?[.accepted] == 2)
        }
    }

    @Test func L5_theSignalWaitsOnlyFourWeeks() async throws {
        let clock = ManualClock(SystemClock().now())
        try await GatewayHarness.with(clock: clock) { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            clock.advance(seconds: 32 * 86400)
            _ = try await harness.send(#"{"token":"\#(token)","data":{"old":"news"}}"#)
            clock.advance(seconds: 29 * 86400)
            let registration = try #require(try await harness.node.store.registration(token: token))
            #expect(
                try await harness.node.store.pendingMessages(
                    androidID: registration.androidID, after: 0, limit: 10, now: clock.now()
                ).isEmpty)
        }
    }

    @Test func L6_afterTheTokenIsDeletedPendingMessagesAreGoneAndSendsAreUnregistered() async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            _ = try await harness.send(#"{"token":"\#(token)","data":{"pending":"yes"}}"#)
            let registration = try #require(try await harness.node.store.registration(token: token))
            try await client.deleteToken()
            #expect(try await harness.node.store.queuedCount(androidID: registration.androidID) == 0)
            let result = try await harness.sendRequest(#"{"token":"\#(token)","data":{"a":"b"}}"#)
            #expect(result.status == 404)
            let error = try JSONParser.parse(result.body)["error"]
            #expect(error?["details"]?.arrayElements?.first?["errorCode"] == .string("UNREGISTERED"))
            let day = CalendarDay(harness.node.clock.now())
            let row = try await harness.node.store.deliveryReport(
                projectID: harness.project.id, appID: "com.example.test", from: day, through: day
            ).first
            #expect(row?[.unregistered] == 2)
        }
    }

    @Test func M4_inTheBackgroundANotificationGoesToTheTrayAndItsDataWaitsForTheUser() async throws {
        try await GatewayHarness.with { harness in
            let tray = NotificationTray()
            let client = HeraldClient(configuration: harness.clientConfiguration(), presenter: tray)
            let token = try await client.register()
            await client.setAppState(.background)
            try await run(client) {
                try await GatewayHarness.eventually { await client.isConnected }
                let id = try await harness.send(
                    #"{"token":"\#(token)","notification":{"title":"Sale","body":"Now"},"data":{"deal":"42"}}"#)
                try await GatewayHarness.eventually { await tray.notifications.count == 1 }
                #expect(await tray.notifications.first?.fields == ["title": "Sale", "body": "Now"])
                // A data-only message still goes to the app.
                _ = try await harness.send(#"{"token":"\#(token)","data":{"silent":"sync"}}"#)
                #expect(data(try await firstEvent(client)) == ["silent": "sync"])
                #expect(await client.open(messageID: id))
                guard case .message(let opened) = try await firstEvent(client) else {
                    Issue.record("expected the opened message")
                    return
                }
                #expect(opened.data == ["deal": "42"])
                #expect(opened.notification?["title"] == "Sale")
                let day = CalendarDay(harness.node.clock.now())
                try await GatewayHarness.eventually {
                    let row = try await harness.node.store.deliveryReport(
                        projectID: harness.project.id, appID: "com.example.test", from: day, through: day
                    ).first
                    return row?[.opened] == 1 && row?[.impressions] == 1
                }
            }
        }
    }

    @Test func E2_aTopicMessagesReceiptsAreEventsOfTheirOwnWhenTheProjectKeepsEach() async throws {
        try await GatewayHarness.with(settings: { $0.perDeviceEvents = true }) { harness in
            let tray = NotificationTray()
            let client = HeraldClient(configuration: harness.clientConfiguration(), presenter: tray)
            let token = try await client.register()
            _ = try await harness.node.store.subscribe(
                TopicSubscription(
                    projectID: harness.project.id, token: token, topic: "deals",
                    createdAt: harness.node.clock.now().adding(seconds: -1)),
                limit: 2000)
            await client.setAppState(.background)
            try await run(client) {
                try await GatewayHarness.eventually { await client.isConnected }
                let id = try await harness.send(#"{"topic":"deals","notification":{"title":"Sale"}}"#)
                try await GatewayHarness.eventually { await tray.notifications.count == 1 }
                #expect(await client.open(messageID: id))
                try await GatewayHarness.eventually {
                    let types = try await harness.node.store.events(
                        projectID: harness.project.id, after: 0, limit: 10, filter: EventFilter(messageID: id)
                    ).map(\.type)
                    return Set(types) == [.accepted, .delivered, .impression, .opened]
                }
                let events = try await harness.node.store.events(
                    projectID: harness.project.id, after: 0, limit: 10, filter: EventFilter(types: [.opened]))
                #expect(events.map(\.token) == [Registration.redacted(token)])
            }
        }
    }

    @Test func M4_inTheForegroundOneCallbackGetsBothPayloads() async throws {
        try await GatewayHarness.with { harness in
            let tray = NotificationTray()
            let client = HeraldClient(configuration: harness.clientConfiguration(), presenter: tray)
            let token = try await client.register()
            try await run(client) {
                _ = try await harness.send(#"{"token":"\#(token)","notification":{"title":"Hi"},"data":{"k":"v"}}"#)
                guard case .message(let message) = try await firstEvent(client) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.data == ["k": "v"])
                #expect(message.notification == ["title": "Hi"])
                #expect(await tray.notifications.isEmpty)
            }
        }
    }

    @Test func P1_P3_appleDevicesGetAnAPNsPayloadWithTheirOverrides() async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration(platform: .apple))
            let token = try await client.register()
            try await run(client) {
                _ = try await harness.send(
                    #"{"token":"\#(token)","notification":{"title":"Common","body":"Body"},"data":{"k":"v"},"apns":{"payload":{"aps":{"alert":{"title":"Apple title","body":"Apple body"},"category":"REPLY","badge":3}}},"android":{"notification":{"click_action":"OPEN_ANDROID"}}}"#
                )
                guard case .message(let message) = try await firstEvent(client) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.platformPayload["aps"]?["alert"]?["title"] == .string("Apple title"))
                #expect(message.platformPayload["aps"]?["category"] == .string("REPLY"))
                #expect(message.platformPayload["k"] == .string("v"))
                #expect(message.notification?["title"] == "Apple title")
                #expect(message.notification?["category"] == "REPLY")
                #expect(message.data == ["k": "v"])
                #expect(message.priority == "high")
            }
        }
    }

    @Test func P1_P3_androidAndWebGetTheirOwnOverridesAndTapActions() async throws {
        try await GatewayHarness.with { harness in
            let android = HeraldClient(configuration: harness.clientConfiguration())
            let web = HeraldClient(configuration: harness.clientConfiguration(platform: .web))
            let androidToken = try await android.register()
            let webToken = try await web.register()
            let common =
                #""notification":{"title":"Common","body":"Body"},"data":{"k":"common"},"android":{"notification":{"title":"Android title","click_action":"OPEN"}},"webpush":{"data":{"k":"web"},"notification":{"title":"Web title"},"fcm_options":{"link":"https://example.com/x"}}"#
            try await run(android) {
                _ = try await harness.send(#"{"token":"\#(androidToken)",\#(common)}"#)
                guard case .message(let message) = try await firstEvent(android) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.notification?["title"] == "Android title")
                #expect(message.notification?["click_action"] == "OPEN")
                #expect(message.notification?["body"] == "Body")
                #expect(message.data == ["k": "common"])
            }
            try await run(web) {
                _ = try await harness.send(#"{"token":"\#(webToken)",\#(common)}"#)
                guard case .message(let message) = try await firstEvent(web) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.notification?["title"] == "Web title")
                #expect(message.data == ["k": "web"])
                #expect(message.platformPayload["fcmOptions"]?["link"] == .string("https://example.com/x"))
            }
        }
    }

    @Test func L7_theDeliveryDataAPIReportsPerDayAndLabelWithPercentages() async throws {
        try await GatewayHarness.with { harness in
            let client = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await client.register()
            try await run(client) {
                for _ in 0..<2 {
                    _ = try await harness.send(
                        #"{"token":"\#(token)","data":{"a":"b"},"fcm_options":{"analytics_label":"promo"}}"#)
                }
                _ = await nextEvents(client, 2)
                try await GatewayHarness.eventually {
                    let registration = try await harness.node.store.registration(token: token)
                    return try await harness.node.store.queuedCount(androidID: registration!.androidID) <= 1
                }
            }
            let result = try await harness.get(
                "/v1beta1/projects/\(harness.project.id)/androidApps/com.example.test/deliveryData?pageSize=1")
            #expect(result.status == 200)
            let json = try JSONParser.parse(result.body)
            let entry = try #require(json["androidDeliveryData"]?.arrayElements?.first)
            #expect(entry["analyticsLabel"] == .string("promo"))
            #expect(entry["data"]?["countMessagesAccepted"] == .string("2"))
            let delivered = try #require(entry["data"]?["messageOutcomePercents"]?["delivered"]?.numberValue)
            let pending = try #require(entry["data"]?["messageOutcomePercents"]?["pending"]?.numberValue)
            #expect(delivered + pending == 100)
            #expect(delivered >= 50)
            let day = CalendarDay(harness.node.clock.now())
            #expect(entry["date"]?["day"] == .number(Double(day.day)))
        }
    }

    @Test func L6_aDeviceCanUnregisterOneOfItsTokensOverMCS() async throws {
        try await GatewayHarness.with { harness in
            let (device, token) = try await harness.makeDevice()
            let (_, otherDevicesToken) = try await harness.makeDevice()
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                _ = try #require(try await connection.login(device))
                // Another device's token is not this device's to delete.
                try await connection.send(MCSFrame.heraldExtension(MCSFrame.unregisterExtension, otherDevicesToken))
                try await connection.send(MCSFrame.heraldExtension(MCSFrame.unregisterExtension, token))
                try await GatewayHarness.eventually {
                    try await harness.node.store.registration(token: token)?.deletedAt != nil
                }
            }
            #expect(try await harness.node.store.registration(token: otherDevicesToken)?.deletedAt == nil)
            #expect(try await harness.sendRequest(#"{"token":"\#(token)"}"#).status == 404)
        }
    }

    @Test func L7_deliveryDataPagesFollowTheNextPageToken() async throws {
        try await GatewayHarness.with { harness in
            let (_, token) = try await harness.makeDevice()
            for label in ["alpha", "beta", "gamma"] {
                _ = try await harness.send(#"{"token":"\#(token)","fcm_options":{"analytics_label":"\#(label)"}}"#)
            }
            var labels: [String] = []
            var pageToken = ""
            for _ in 0..<4 {
                let result = try await harness.get(
                    "/v1beta1/projects/\(harness.project.number)/androidApps/com.example.raw/deliveryData?pageSize=2&pageToken=\(pageToken)"
                )
                #expect(result.status == 200)
                let json = try JSONParser.parse(result.body)
                labels +=
                    json["androidDeliveryData"]?.arrayElements?.compactMap { $0["analyticsLabel"]?.stringValue } ?? []
                guard let next = json["nextPageToken"]?.stringValue else { break }
                pageToken = next
            }
            #expect(labels == ["alpha", "beta", "gamma"])
        }
    }
}
