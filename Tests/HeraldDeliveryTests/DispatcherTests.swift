import GRDB
import HeraldCore
import HeraldStorage
import HeraldTelemetry
import HeraldTestSupport
import Logging
import Testing

@testable import HeraldDelivery

/// A send is counted as accepted (`herald_messages_accepted_total`) only once it is stored:
/// one whose write fails is answered with the error and counted nowhere as accepted.
@Suite struct DispatcherTests {
    let counted = CountedMetrics()
    let clock = ManualClock()

    func accepted(_ project: String) -> Int {
        counted.count(#"herald_messages_accepted_total{project="\#(project)"}"#)
    }

    @Test(arguments: [#"{"token":"TOKEN","data":{"n":"1"}}"#, #"{"topic":"news","data":{"n":"1"}}"#])
    func aSendWhoseWriteFailsIsNotCountedAsAccepted(_ message: String) async throws {
        let path = createdTemporaryDirectory() + "/herald.sqlite"
        let store = try SQLiteStore(path: path)
        let instance = try await AppInstance.make(
            in: store,
            project: Project(
                id: "counted", number: 424_242, apiKey: "AIza-c", serverKey: "AAAA-c", createdAt: Timestamp(seconds: 1)),
            appID: "com.example.c", at: clock.now())
        let dispatcher = Dispatcher(
            store: store, clock: clock, metrics: counted.metrics,
            path: DeliveryPath(clock: clock), logger: Logger(label: "test"))
        let request = try SendRequest.decode(
            Array(#"{"message":\#(message.replacingOccurrences(of: "TOKEN", with: instance.token))}"#.utf8))

        _ = try await dispatcher.send(request, project: instance.project)
        #expect(accepted("counted") == 1)

        // The database refuses every new message, as a full disk would.
        let database = try DatabaseQueue(path: path)
        try await database.write { db in
            try db.execute(
                sql: "CREATE TRIGGER refused BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'refused'); END")
        }
        await #expect(throws: (any Error).self) { try await dispatcher.send(request, project: instance.project) }
        #expect(accepted("counted") == 1)
    }
}
