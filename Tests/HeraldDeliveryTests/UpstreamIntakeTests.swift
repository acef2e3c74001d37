import HeraldCore
import HeraldDelivery
import HeraldProtocol
import HeraldStorage
import HeraldTelemetry
import Logging
import Prometheus
import Synchronization
import Testing

/// Devices' upstream messages as the server takes them: checked against the sending
/// device's registration and the 4 KB and T5 limits, kept, and past their time to live
/// dropped with a `send_error` queued for the device.
@Suite struct UpstreamIntakeTests {
    final class World: Sendable {
        let store = InMemoryStore()
        let clock = ManualClock()
        let registry = DeliveryPath()
        let project: Project
        let device: Device
        let token: String
        let intake: UpstreamIntake
        let arrivals: FanoutEngineTests.Told

        init(upstreamPerMinute: Int = 1_500_000, perDevice: Int = 1_000, waiting: Int = 10_000) async throws {
            var project = Project(
                id: "upstream-project", number: 424_242, apiKey: "AIza-u", serverKey: "AAAA-u",
                createdAt: Timestamp(seconds: 1))
            project.settings.upstreamPerMinute = upstreamPerMinute
            project.settings.upstreamDevicePerMinute = perDevice
            project.settings.upstreamWaiting = waiting
            let instance = try await AppInstance.make(
                in: store, project: project, appID: "com.example.up", at: clock.now())
            (self.project, device, token) = (project, instance.device, instance.token)
            let arrivals = FanoutEngineTests.Told()
            self.arrivals = arrivals
            intake = UpstreamIntake(
                store: store, path: registry, clock: clock,
                metrics: HeraldMetrics(factory: PrometheusMetricsFactory()),
                arrival: { project in arrivals.add(project) }, logger: Logger(label: "test"))
        }

        func request(_ id: String, to: String = "424242@fcm.googleapis.com", token: String? = nil, ttl: Int64? = nil)
            -> UpstreamRequest
        {
            UpstreamRequest(
                messageID: id, to: to, category: "com.example.up", token: token ?? self.token, ttlSeconds: ttl,
                data: ["k": "v"])
        }
    }

    /// Upstream messages are not storage: an id longer than `maximumMessageIDBytes` is
    /// refused, and past the project's `upstream-waiting` nothing more is kept.
    @Test func T5_aLongMessageIDAndMessagesPastTheProjectsWaitingAreRefusedAndNotKept() async throws {
        let world = try await World(waiting: 3)
        let long = String(repeating: "i", count: UpstreamMessage.maximumMessageIDBytes + 1)
        #expect(
            try await world.intake.receive(world.request(long), androidID: world.device.androidID)
                == .invalidParameters)
        #expect(try await world.store.upstreamCount(projectID: world.project.id) == 0)
        for index in 0..<3 {
            #expect(
                try await world.intake.receive(world.request("w\(index)"), androidID: world.device.androidID) == nil)
        }
        #expect(
            try await world.intake.receive(world.request("w3"), androidID: world.device.androidID) == .tooManyMessages)
        #expect(try await world.store.upstreamCount(projectID: world.project.id) == 3)
    }

    @Test func aDevicesMessageIsKeptOnceAndAnnounced() async throws {
        let world = try await World()
        #expect(try await world.intake.receive(world.request("u1", ttl: nil), androidID: world.device.androidID) == nil)
        // Sent again after a reconnect: still one.
        #expect(try await world.intake.receive(world.request("u1"), androidID: world.device.androidID) == nil)
        // Found by the device's app and sender when no token is named.
        #expect(
            try await world.intake.receive(world.request("u2", token: ""), androidID: world.device.androidID) == nil)
        #expect(try await world.store.upstreamCount(projectID: world.project.id) == 2)
        #expect(world.arrivals.all == Array(repeating: world.project.id, count: 3))
        let now = world.clock.now()
        let kept = try await world.store.leaseUpstream(
            projectID: world.project.id, holder: "h", now: now, until: now.adding(seconds: 1), limit: 5)
        #expect(kept.map(\.messageID) == ["u1", "u2"])
        #expect(kept[0].token == world.token && kept[0].category == "com.example.up")
        #expect(kept[0].expiresAt == now.adding(seconds: UpstreamMessage.defaultTTLSeconds))
    }

    @Test func messagesThatNameTheWrongSenderOrAnotherDevicesTokenAreRefused() async throws {
        let world = try await World()
        let androidID = world.device.androidID
        #expect(try await world.intake.receive(world.request(""), androidID: androidID) == .invalidParameters)
        #expect(
            try await world.intake.receive(world.request("a", to: "424242@example.com"), androidID: androidID)
                == .invalidParameters)
        #expect(
            try await world.intake.receive(world.request("b", to: "999@fcm.googleapis.com"), androidID: androidID)
                == .invalidParameters)
        // C3: a token is used only by its own device.
        #expect(try await world.intake.receive(world.request("c"), androidID: androidID + 1) == .invalidParameters)
        #expect(
            try await world.intake.receive(world.request("d", token: Registration.makeToken()), androidID: androidID)
                == .invalidParameters)
        var big = world.request("e")
        big.data = ["k": String(repeating: "x", count: UpstreamMessage.maximumDataBytes)]
        #expect(try await world.intake.receive(big, androidID: androidID) == .messageTooBig)
        #expect(try await world.store.upstreamCount(projectID: world.project.id) == 0)
    }

    @Test func T5_aDevicePastItsUpstreamLimitIsToldTooManyMessagesUntilTheNextMinute() async throws {
        let world = try await World(perDevice: 3)
        let androidID = world.device.androidID
        for index in 0..<3 {
            #expect(try await world.intake.receive(world.request("m\(index)"), androidID: androidID) == nil)
        }
        #expect(try await world.intake.receive(world.request("m3"), androidID: androidID) == .tooManyMessages)
        world.clock.advance(seconds: 60)
        #expect(try await world.intake.receive(world.request("m3"), androidID: androidID) == nil)
    }

    /// Unbounded writes: a device whose app servers take nothing cannot fill the store.
    @Test func aDeviceWithAThousandMessagesWaitingIsToldTooManyMessagesUntilOneIsTaken() async throws {
        let world = try await World(perDevice: 5_000)
        let androidID = world.device.androidID
        for index in 0..<UpstreamMessage.maximumWaitingPerDevice {
            #expect(try await world.intake.receive(world.request("w\(index)"), androidID: androidID) == nil)
        }
        #expect(try await world.intake.receive(world.request("one-more"), androidID: androidID) == .tooManyMessages)
        #expect(try await world.store.acknowledgeUpstream(projectID: world.project.id, messageID: "w0", token: nil))
        #expect(try await world.intake.receive(world.request("one-more"), androidID: androidID) == nil)
    }

    @Test func pastItsTimeToLiveAMessageIsDroppedAndItsDeviceGetsASendError() async throws {
        let world = try await World()
        let androidID = world.device.androidID
        #expect(try await world.intake.receive(world.request("short", ttl: 0), androidID: androidID) == nil)
        #expect(try await world.intake.receive(world.request("long", ttl: 3600), androidID: androidID) == nil)
        #expect(try await world.intake.expire() == 0)
        world.clock.advance(seconds: 2)
        #expect(try await world.intake.expire() == 1)
        #expect(try await world.store.upstreamCount(projectID: world.project.id) == 1)
        let queued = try await world.store.pendingMessages(
            androidID: androidID, after: 0, limit: 10, now: world.clock.now())
        #expect(queued.count == 1)
        let stanza = try McsProto_DataMessageStanza(serializedBytes: try #require(queued.first).stanza)
        #expect(stanza.category == "com.example.up" && stanza.from == "424242@fcm.googleapis.com")
        #expect(
            stanza.appData.map { "\($0.key)=\($0.value)" } == [
                "message_type=send_error", "google.message_id=short", "error=SERVICE_NOT_AVAILABLE",
            ])
    }
}
