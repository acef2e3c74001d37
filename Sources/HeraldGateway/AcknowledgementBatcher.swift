import HeraldDelivery
import HeraldStorage
import Logging
import Synchronization

/// Group commit for acknowledgements: devices acknowledge one message at a time, and
/// each would be a write transaction of its own. Acknowledgements that arrive while a
/// batch is being written go into the next batch, so under load one transaction carries
/// many devices' acknowledgements. A lost acknowledgement only means a redelivery, which
/// the SDK drops by message id.
final class AcknowledgementBatcher: Sendable {
    private let store: any HeraldStore
    private let metrics: HeraldMetrics
    private let logger: Logger
    private let pending: Mutex<[UInt64: [String]]> = Mutex([:])
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init(store: any HeraldStore, metrics: HeraldMetrics, logger: Logger) {
        self.store = store
        self.metrics = metrics
        self.logger = logger
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Adds acknowledgements to the next batch; callable from any thread without waiting.
    func submit(androidID: UInt64, persistentIDs: [String]) {
        pending.withLock { $0[androidID, default: []] += persistentIDs }
        signal.yield()
    }

    /// Writes batches until cancelled; what is pending then is written first, outside the
    /// cancelled task (a store refuses to start work for a cancelled one, and a shutdown
    /// would otherwise drop the last acknowledgements and deliver those messages again).
    func run() async {
        for await _ in signals {
            await flush()
        }
        await Task { await self.flush() }.value
    }

    /// Writes everything pending, batch by batch.
    func flush() async {
        while true {
            let batch = pending.withLock { pending in
                defer { pending = [:] }
                return pending
            }
            guard !batch.isEmpty else { return }
            do {
                let removed = try await store.acknowledge(batch: batch)
                metrics.increment("herald_messages_delivered_total", by: removed)
            } catch is CancellationError {
                // Kept for the final flush, which runs outside the cancelled task.
                pending.withLock { $0.merge(batch) { newer, older in older + newer } }
                return
            } catch {
                logger.warning("acknowledgements not written", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Stops the loop once what is pending is written.
    func finish() {
        signal.finish()
    }
}
