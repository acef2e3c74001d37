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
    private let pending: Mutex<Pending> = Mutex(Pending())
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

    /// Ids waiting for their write past which `hasRoom` is false (SEMANTICS N3): a batch
    /// of a few thousand is written in milliseconds, so only a store that cannot keep up
    /// fills it, and then the connections that acknowledge wait (`room()`) instead of the
    /// batch growing without end.
    public static let capacity = 20_000

    /// The acknowledgements not yet taken by a write, and who waits for room.
    struct Pending {
        var byDevice: [UInt64: [String]] = [:]
        var count = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        var isFinished = false
    }

    /// Adds acknowledgements to the next batch; callable from any thread without waiting.
    /// Those who can wait ask `hasRoom` first: the batch takes what it is given.
    public func submit(androidID: UInt64, persistentIDs: [String]) {
        pending.withLock {
            $0.byDevice[androidID, default: []] += persistentIDs
            $0.count += persistentIDs.count
        }
        signal.yield()
    }

    /// Whether the next batch is under `capacity`.
    public var hasRoom: Bool { pending.withLock { $0.count < Self.capacity || $0.isFinished } }

    /// Returns once the next batch is under `capacity` (at once if it is), or the batcher stops.
    public func room() async {
        await withCheckedContinuation { continuation in
            let waits = pending.withLock { pending -> Bool in
                guard pending.count >= Self.capacity, !pending.isFinished else { return false }
                pending.waiters.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
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
            let (batch, waiters) = pending.withLock { pending in
                defer {
                    pending.byDevice = [:]
                    pending.count = 0
                    pending.waiters = []
                }
                return (pending.byDevice, pending.waiters)
            }
            for waiter in waiters { waiter.resume() }
            guard !batch.isEmpty else { return }
            do {
                let removed = try await store.acknowledge(batch: batch)
                metrics.increment("herald_messages_delivered_total", by: removed)
                receiptSignal?.acknowledged(batch.values.joined())
            } catch is CancellationError {
                // Kept for the final flush, which runs outside the cancelled task.
                pending.withLock {
                    $0.byDevice.merge(batch) { newer, older in older + newer }
                    $0.count += batch.values.reduce(0) { $0 + $1.count }
                }
                return
            } catch {
                logger.warning("acknowledgements not written", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Stops the loop once what is pending is written.
    public func finish() {
        let waiters = pending.withLock { pending in
            defer { pending.waiters = [] }
            pending.isFinished = true
            return pending.waiters
        }
        for waiter in waiters { waiter.resume() }
        signal.finish()
    }
}
