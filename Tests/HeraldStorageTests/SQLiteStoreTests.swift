import Foundation
import HeraldCore
import HeraldStorage
import Testing

/// What only the embedded store does.
@Suite struct SQLiteStoreTests {
    /// L4: a write whose running statement SQLite interrupts because its task was
    /// cancelled, as at a stop, is reported as a cancellation: the acknowledgement batcher
    /// then keeps its batch for the last flush instead of dropping it.
    @Test func L4_aWriteInterruptedByItsTasksCancellationIsACancellation() async throws {
        let store = try SQLiteStore(dataDirectory: temporaryDirectory())
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        // 100,000 expired rows on as many devices: one sweep statement long enough to be
        // under way when the cancellation comes.
        let rows = (0..<100_000).map { index in
            var row = entry("m\(index)", token: "t\(index)", expires: 150)
            row.androidID = UInt64(index + 1)
            return row
        }
        try await store.appendMessages([], queue: rows)
        let sweep = Task { try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 1_000_000) }
        try await Task.sleep(for: .milliseconds(20))
        sweep.cancel()
        await #expect(throws: CancellationError.self) { try await sweep.value }
    }
}
