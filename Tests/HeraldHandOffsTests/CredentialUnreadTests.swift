import CoreMetrics
import Foundation
import GRDB
import HeraldCore
import HeraldTelemetry
import Logging
import Synchronization
import Testing

@testable import HeraldHandOffs
@testable import HeraldStorage

/// A hand-off whose credential the store cannot read waits with a backoff, and the project is
/// charged no refusal: the push service refused nothing. Only a credential that is missing
/// (or that the service refuses) holds the project's messages as a refusal (SEMANTICS A3, R4,
/// W3). For each service: APNs, FCM, a browser's push service.
@Suite struct CredentialUnreadTests {
    enum Service: String, CaseIterable { case apns, fcm, webPush }

    let now = Timestamp(seconds: 1_800_000_000)

    /// The service's part of the hand-off over a SQLite store at `path`, with the errors it
    /// counts against projects.
    func forward(_ service: Service, store: SQLiteStore) async -> (HandOffOutcome, [ErrorCount]) {
        let errors = ErrorLog()
        let environment = HandOffEnvironment(
            configuration: HandOffForwarder.Configuration(), store: store, clock: ManualClock(),
            metrics: HeraldMetrics(factory: NOOPMetricsHandler.instance), logger: Logger(label: "test"),
            errors: errors)
        let entry = QueuedMessage(
            sequence: 7, androidID: 1, token: "token", persistentID: "0:1", messageID: "m", projectID: "p", stanza: [],
            createdAt: now, expiresAt: now.adding(seconds: 60))
        let outcome: HandOffOutcome
        switch service {
        case .apns:
            let address = try! #require(APNsAddress(deviceToken: String(repeating: "ab", count: 32), isSandbox: false))
            let apns = APNsHandOffs(environment: environment)
            outcome = await apns.forward(
                [HandOff(entry: entry, destination: .apns(address))], key: .init(projectID: "p", isSandbox: false),
                now: now)
            await apns.shutdown()
        case .fcm:
            let fcm = FCMHandOffs(environment: environment)
            outcome = await fcm.forward([HandOff(entry: entry, destination: .fcm)], projectID: "p", now: now)
            await fcm.shutdown()
        case .webPush:
            let webPush = WebPushHandOffs(environment: environment)
            outcome = await webPush.forward(
                [HandOff(entry: entry, destination: .webPush(endpoint: "https://push.example/s/1"))],
                key: .init(projectID: "p", origin: "https://push.example"), now: now)
            await webPush.shutdown()
        }
        return (outcome, errors.counted)
    }

    @Test(arguments: Service.allCases)
    func aCredentialTheStoreCannotReadHoldsTheEntryAndChargesNoRefusal(_ service: Service) async throws {
        let path = NSTemporaryDirectory() + "herald-test-" + SecureRandom.hex(bytes: 8) + ".sqlite"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteStore(path: path)

        // With no credential stored, the entry is held as a refusal, counted against the project.
        let (missing, refusals) = await forward(service, store: store)
        #expect(missing.deferred.values.joined().sorted() == [7])
        #expect(refusals.map(\.code) == ["THIRD_PARTY_AUTH_ERROR"] && refusals.map(\.count) == [1])

        // A store that fails the read: the entry waits, and nothing is counted.
        let table = ["apns": "apns_credentials", "fcm": "fcm_relay_credentials", "webPush": "web_push_keys"][
            service.rawValue]!
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "DROP TABLE \(table)") }
        let (unread, charged) = await forward(service, store: store)
        #expect(unread.deferred.values.joined().sorted() == [7])
        #expect(unread.delivered.isEmpty && unread.dropped.isEmpty && unread.unregistered.isEmpty)
        #expect(charged.isEmpty)
    }
}
