import HeraldCore
import HeraldTestSupport
import Logging
import Testing

@testable import HeraldDelivery

/// What the acknowledgement batcher does when the node shuts down.
@Suite struct AcknowledgementBatcherTests {
    /// L4: an acknowledgement that arrived just before shutdown is still written, so the
    /// message is not delivered again after a restart. The store (SQLite) refuses to start
    /// work for a cancelled task; the last flush must run outside it.
    @Test func L4_acknowledgementsPendingAtShutdownAreWritten() async throws {
        try await GatewayHarness.with { harness in
            let (device, token) = try await harness.makeDevice()
            let id = try await harness.send(#"{"token":"\#(token)","data":{"k":"v"}}"#)
            #expect(try await harness.node.store.queuedCount(androidID: device.androidID) == 1)
            var logger = Logger(label: "acknowledgement-test")
            logger.logLevel = .critical
            let batcher = AcknowledgementBatcher(
                store: harness.node.store, metrics: harness.node.metrics, logger: logger)
            batcher.submit(androidID: device.androidID, persistentIDs: [id])
            let running = Task { await batcher.run() }
            batcher.finish()
            await running.value
            #expect(try await harness.node.store.queuedCount(androidID: device.androidID) == 0)
        }
    }
}

/// SEMANTICS N3: the batch waiting for its write is bounded, and those who wait for room
/// are let go when a write takes it.
@Suite struct AcknowledgementBatchBoundTests {
    @Test func N3_aFullBatchHasNoRoomUntilAWriteTakesIt() async throws {
        try await GatewayHarness.with { harness in
            var logger = Logger(label: "acknowledgement-test")
            logger.logLevel = .critical
            let batcher = AcknowledgementBatcher(
                store: harness.node.store, metrics: harness.node.metrics, logger: logger)
            #expect(batcher.hasRoom)
            let ids = (0..<AcknowledgementBatcher.capacity).map { "0:\($0)%unknown" }
            batcher.submit(androidID: 1, persistentIDs: ids)
            #expect(!batcher.hasRoom)
            let waiting = Task { await batcher.room() }
            let running = Task { await batcher.run() }
            await waiting.value
            #expect(batcher.hasRoom)
            batcher.finish()
            await running.value
        }
    }
}
