import Synchronization

/// How many offers of one page the sessions and devices have not answered yet: a
/// session that declines answers at once, a device by acknowledging.
final class Settlement: Sendable {
    private let unanswered = Atomic<Int>(0)
    /// Sends and answers so far: while it grows, the page's devices are being reached.
    private let events = Atomic<Int>(0)
    /// Times the waiter's naps: the schedule of the one connection the page was offered
    /// to, or nil for a task of their own.
    private let schedule: DeviceRegistry.Schedule?

    init(schedule: DeviceRegistry.Schedule? = nil) {
        self.schedule = schedule
    }

    var outstanding: Int { unanswered.load(ordering: .acquiring) }

    func add() { unanswered.add(1, ordering: .relaxed) }

    func sent() { events.add(1, ordering: .relaxed) }

    /// The waiter while it naps: the last answer wakes it at once, and takes its timer back.
    private struct Napping {
        /// Counts the naps, so that a timer set for one cannot end a later one.
        var nap: UInt64 = 0
        /// A nap whose alarm rang before its waiter lay down: it does not lie down.
        var rung: UInt64 = 0
        var continuation: CheckedContinuation<Void, Never>?
        var timer: (any DeviceRegistry.Timer)?
    }
    private let waiter = Mutex(Napping())

    func answer() {
        let left = unanswered.subtract(1, ordering: .acquiringAndReleasing).newValue
        events.add(1, ordering: .relaxed)
        if left == 0 { wake(nap: nil) }
    }

    /// Ends the current nap (or nap `nap` only, for its timer) and takes its timer back.
    private func wake(nap: UInt64?) {
        let (continuation, timer) = waiter.withLock {
            waiter -> (CheckedContinuation<Void, Never>?, (any DeviceRegistry.Timer)?) in
            guard nap == nil || nap == waiter.nap else { return (nil, nil) }
            if let nap, waiter.continuation == nil { waiter.rung = nap }
            defer { (waiter.continuation, waiter.timer) = (nil, nil) }
            return (waiter.continuation, waiter.timer)
        }
        continuation?.resume()
        if nap == nil { timer?.cancel() }
    }

    /// Sleeps for `duration`, or less if every offer is answered meanwhile: timed on the
    /// connection's thread when the settlement has its schedule, otherwise by a child task.
    private func nap(_ duration: Duration) async {
        let nap: UInt64? = waiter.withLock { waiter in
            guard outstanding > 0 else { return nil }
            waiter.nap += 1
            return waiter.nap
        }
        guard let nap else { return }
        if let timer = schedule?(duration, { self.wake(nap: nap) }) {
            // Kept for the last answer to take back.
            waiter.withLock { waiter in if waiter.nap == nap { waiter.timer = timer } }
            await sleep(nap: nap)
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(for: duration)
                if !Task.isCancelled { self.wake(nap: nap) }
            }
            await sleep(nap: nap)
            group.cancelAll()
        }
    }

    /// Lies down for nap `nap` until an answer or its alarm ends it (at once if the
    /// alarm rang already).
    private func sleep(nap: UInt64) async {
        await withCheckedContinuation { continuation in
            // Checked under the lock that `answer` takes after counting: an answer
            // either finds the continuation here or came before this check.
            let lying = waiter.withLock { waiter in
                guard waiter.nap == nap, waiter.rung != nap, outstanding > 0 else { return false }
                waiter.continuation = continuation
                return true
            }
            if !lying { continuation.resume() }
        }
    }

    /// Returns once every offer is answered, or when neither sends nor answers came
    /// for `quiet`, or after `limit` in all.
    func wait(quiet: Duration, limit: Duration) async {
        let clock = ContinuousClock()
        let start = clock.now
        var lastProgress = start
        var seen = events.load(ordering: .relaxed)
        while outstanding > 0, !Task.isCancelled {
            await nap(.milliseconds(1))
            let now = clock.now
            let current = events.load(ordering: .relaxed)
            if current != seen {
                seen = current
                lastProgress = now
            } else if now - lastProgress >= quiet {
                return
            }
            if now - start >= limit { return }
        }
    }
}
