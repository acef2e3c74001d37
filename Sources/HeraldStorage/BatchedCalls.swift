import Synchronization

/// Calls that arrive while a batch of them is being run wait, and run together as the next
/// batch: writes that share a transaction (the stores' group commits).
///
/// No thread is held waiting. The caller that finds no batch running runs the next one
/// (every call waiting then, at most `maximumBatch`, its own first), keeps each call's
/// answer, and hands the turn to the oldest call still waiting. A call is answered once
/// its batch has run, never before.
final class BatchedCalls<Call: Sendable, Answer: Sendable>: Sendable {
    /// At most this many calls share a batch.
    let maximumBatch: Int

    init(maximumBatch: Int) {
        self.maximumBatch = maximumBatch
    }

    /// What a waiting call is told.
    fileprivate enum Turn {
        /// Its batch has run: its answer is kept.
        case done
        /// No batch is running: it runs the next one.
        case run
    }

    /// One call waiting for its batch, and then its answer.
    fileprivate final class Waiter: Sendable {
        let call: Call
        let answer = Mutex<Result<Answer, any Error>?>(nil)
        /// The waiting caller, or a turn given before it listened.
        private let slot = Mutex<(waiter: CheckedContinuation<Turn, Never>?, early: Turn?)>((nil, nil))

        init(_ call: Call) {
            self.call = call
        }

        func wait() async -> Turn {
            await withCheckedContinuation { continuation in
                let early = slot.withLock { slot -> Turn? in
                    if let early = slot.early { return early }
                    slot.waiter = continuation
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        }

        func give(_ turn: Turn) {
            let waiter = slot.withLock { slot -> CheckedContinuation<Turn, Never>? in
                guard let waiter = slot.waiter else {
                    slot.early = turn
                    return nil
                }
                slot.waiter = nil
                return waiter
            }
            waiter?.resume(returning: turn)
        }
    }

    private struct State {
        var waiting: [Waiter] = []
        var running = false
    }

    private let state = Mutex(State())
    /// Batches run so far.
    let batches = Atomic<Int>(0)

    /// Calls waiting for a batch.
    var waiting: Int { state.withLock { $0.waiting.count } }

    /// Answers `call` once its batch has run: `run` (this caller's, when the turn is its own)
    /// is given the batch's calls and answers each, in their order. A nil answer gives that
    /// call back, unrun, to wait at the head of the line for the next batch: the runner's
    /// task was cancelled, say, and the other callers' were not. The runner's own call (the
    /// first) must be answered.
    func submit(_ call: Call, run: ([Call]) async -> [Result<Answer, any Error>?]) async throws -> Answer {
        let waiter = Waiter(call)
        var runs = state.withLock { state in
            state.waiting.append(waiter)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if !runs { runs = await waiter.wait() == .run }
        if runs {
            let batch = state.withLock { state in
                let batch = Array(state.waiting.prefix(maximumBatch))
                state.waiting.removeFirst(batch.count)
                return batch
            }
            let answers = await run(batch.map(\.call))
            var answered: [Waiter] = []
            var givenBack: [Waiter] = []
            for (waiter, answer) in zip(batch, answers) {
                guard let answer else {
                    givenBack.append(waiter)
                    continue
                }
                waiter.answer.withLock { $0 = answer }
                answered.append(waiter)
            }
            finish(answered, givingBack: givenBack)
        }
        guard let answer = waiter.answer.withLock({ $0 }) else {
            preconditionFailure("a batch ran without answering each of its calls")
        }
        return try answer.get()
    }

    /// Answers the other callers of `batch` (the runner first), puts the calls given back at
    /// the head of the line, and passes the turn on.
    private func finish(_ batch: [Waiter], givingBack givenBack: [Waiter]) {
        batches.add(1, ordering: .relaxed)
        let next = state.withLock { state -> Waiter? in
            state.waiting.insert(contentsOf: givenBack, at: 0)
            guard let next = state.waiting.first else {
                state.running = false
                return nil
            }
            return next
        }
        for waiter in batch.dropFirst() { waiter.give(.done) }
        next?.give(.run)
    }
}
