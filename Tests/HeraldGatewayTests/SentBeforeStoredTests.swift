import Foundation
import GRDB
import HeraldCore
import HeraldProtocol
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldDelivery

/// A message to a device connected here goes out while its row is written (SEMANTICS L2),
/// and its acknowledgement still deletes the row (L4) however the two cross.
@Suite(.serialized) struct SentBeforeStoredTests {
    @Test func L2_aConnectedDeviceGetsTheMessageWhileItsRowIsStillBeingWritten() async throws {
        try await GatewayHarness.with { harness in
            let (device, token) = try await harness.makeDevice()
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                let response = try #require(try await connection.login(device))
                #expect(!response.hasError)
                // Another connection holds SQLite's write lock, as a long transaction would;
                // after five seconds it lets go whatever happened, so that a failure cannot hang.
                let blocker = try WriteLockHolder(path: harness.directory + "/data/herald.sqlite")
                let watchdog = Task {
                    try await Task.sleep(for: .seconds(5))
                    try blocker.release()
                }
                defer { watchdog.cancel() }
                let send = Task { try await harness.send(#"{"token":"\#(token)","data":{"early":"yes"}}"#) }
                let message = try #require(try await connection.receiveMessage())
                #expect(message.appData.contains { $0.key == "early" && $0.value == "yes" })
                // Received while nothing could be written yet.
                #expect(blocker.isHeld)
                #expect(try await harness.node.store.queuedCount(androidID: device.androidID) == 0)
                // Acknowledged before the row exists.
                try await connection.acknowledge([message.persistentID])
                try await Task.sleep(for: .milliseconds(50))
                try blocker.release()
                #expect(try await send.value == message.persistentID)
                try await GatewayHarness.eventually {
                    try await harness.node.store.queuedCount(androidID: device.androidID) == 0
                }
            }
            // Nothing is sent again on the next connection.
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                _ = try #require(try await connection.login(device))
                let next = try await harness.send(#"{"token":"\#(token)","data":{"next":"yes"}}"#)
                #expect(try await connection.receiveMessage()?.persistentID == next)
            }
        }
    }

    /// L7: a message its connected device acknowledges while the send waits gets no queue
    /// row at all and still counts as delivered; one the device leaves unanswered past the
    /// wait is written, and its later acknowledgement deletes it (L4).
    @Test func L7_aMessageAcknowledgedWhileItsSendWaitsGetsNoQueueRowAndCountsAsDelivered() async throws {
        // Two seconds of waiting, so that a slow run cannot miss the acknowledgement.
        let wait = DeliveryPath.Settle(quiet: .seconds(2), limit: .seconds(2))
        try await GatewayHarness.with(acknowledgementWait: wait) { harness in
            let (device, token) = try await harness.makeDevice()
            // Counts every row the server puts in a device queue. The server may be writing
            // just then (the device's check-in): the trigger waits for it.
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let database = try DatabaseQueue(
                path: harness.directory + "/data/herald.sqlite", configuration: configuration)
            try await database.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO counters (name, value) VALUES ('test_queue_rows', 0);
                        CREATE TRIGGER test_queue_rows AFTER INSERT ON device_queue
                        BEGIN UPDATE counters SET value = value + 1 WHERE name = 'test_queue_rows'; END;
                        """)
            }
            @Sendable func queueRows() async throws -> Int? {
                try await database.read { db in
                    try Int.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'test_queue_rows'")
                }
            }
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                _ = try #require(try await connection.login(device))
                let answered = Task { try await harness.send(#"{"token":"\#(token)","data":{"n":"1"}}"#) }
                let first = try #require(try await connection.receiveMessage())
                try await connection.acknowledge([first.persistentID])
                #expect(try await answered.value == first.persistentID)
                #expect(try await queueRows() == 0)

                let unanswered = Task { try await harness.send(#"{"token":"\#(token)","data":{"n":"2"}}"#) }
                let second = try #require(try await connection.receiveMessage())
                #expect(try await unanswered.value == second.persistentID)
                #expect(try await queueRows() == 1)
                try await connection.acknowledge([second.persistentID])
                try await GatewayHarness.eventually {
                    try await harness.node.store.queuedCount(androidID: device.androidID) == 0
                }
            }
            let day = CalendarDay(harness.node.clock.now())
            try await GatewayHarness.eventually {
                let row = try await harness.node.store.deliveryReport(
                    projectID: harness.project.id, appID: nil, from: day, through: day
                ).first
                return row?[.delivered] == 2
            }
        }
    }
}

/// Holds SQLite's write lock on a database from a connection of its own until released.
final class WriteLockHolder: Sendable {
    private let queue: DatabaseQueue
    private let held = Mutex<Bool>(true)

    init(path: String) throws {
        var configuration = Configuration()
        // The transaction stays open between two accesses on purpose.
        configuration.allowsUnsafeTransactions = true
        // The server may be writing just then (the login's own record): wait for it.
        configuration.busyMode = .timeout(5)
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
    }

    /// Whether the lock is still held.
    var isHeld: Bool { held.withLock { $0 } }

    /// Ends the transaction; later calls do nothing.
    func release() throws {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        guard wasHeld else { return }
        try queue.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
    }
}
