public import HeraldStorage
public import HeraldTelemetry
public import Logging
import Synchronization

/// Group commit for acknowledgements: devices acknowledge one message at a time, and
/// each would be a write transaction of its own. A batch gathers for a few milliseconds
/// after its first acknowledgement, and those that arrive while it is being written go
/// into the next, so one transaction carries many devices' acknowledgements. A lost
/// acknowledgement only means a redelivery, which the SDK drops by message id.
public final class AcknowledgementBatcher: AcknowledgementWriter {
    private let store: any QueueStore
    private let metrics: HeraldMetrics
    private let logger: Logger
    /// Told of every acknowledgement written, for the Web Push receipts it makes.
    private let receiptSignal: PushReceiptSignal?
    private let pending: Mutex<[UInt64: [String]]> = Mutex([:])
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    public init(store: any QueueStore, metrics: HeraldMetrics, receiptSignal: PushReceiptSignal? = nil, logger: Logger)
    {
        self.receiptSignal = receiptSignal
        self.store = store
        self.metrics = metrics
        self.logger = logger
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// How long a batch gathers acknowledgements after the first before it is written. A
    /// device acknowledges each message on its own, so without it a node delivering 1,000
    /// messages a second to different devices wrote about as many deletions a second; the
    /// wait only delays deleting rows of messages the devices already have.
    static let gatherMilliseconds = 10

    /// Adds acknowledgements to the next batch; callable from any thread without waiting.
    public func submit(androidID: UInt64, persistentIDs: [String]) {
        pending.withLock { $0[androidID, default: []] += persistentIDs }
        signal.yield()
    }

    /// Writes batches until `finish()` (or cancellation), then what is still pending. After
    /// a graceful stop that last write runs; a cancelled task's store refuses it, and those
    /// messages are delivered again and dropped by id on the device (SEMANTICS L4).
    public func run() async {
        for await _ in signals {
            // Cut short by a stop, after which the batch is still written.
            try? await Task.sleep(for: .milliseconds(Self.gatherMilliseconds))
            await flush()
        }
        await flush()
    }

    /// Writes everything pending, batch by batch.
    public func flush() async {
        while true {
            let batch = pending.withLock { pending in
                defer { pending = [:] }
                return pending
            }
            guard !batch.isEmpty else { return }
            do {
                let removed = try await store.acknowledge(batch: batch)
                metrics.increment("herald_messages_delivered_total", by: removed)
                receiptSignal?.acknowledged(batch.values.joined())
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
    public func finish() {
        signal.finish()
    }
}
