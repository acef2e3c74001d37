/// How a background worker waits between its looks at the store: until a write creates its
/// kind of work (`WorkSignals`), a time it knows work falls due, or `fallback`, whichever
/// comes first; while writes keep waking it, at most one look every `pace`. A store that
/// gives no signal is looked at every `polling`.
public struct WorkWaiter: Sendable {
    let signal: WakeSignal?
    let fallback: Duration
    let pace: Duration
    let polling: Duration
    private var lastLook: ContinuousClock.Instant?

    /// The fallback of a worker woken by its signal: the look that finds what was missed.
    public static let defaultFallback: Duration = .seconds(10)

    public init(
        _ work: WorkSignals.Work, of signals: WorkSignals?, fallback: Duration = defaultFallback,
        pace: Duration = .zero, polling: Duration
    ) {
        self.signal = signals?[work]
        self.fallback = fallback
        self.pace = pace
        self.polling = polling
    }

    /// Taken before a look: a write after it ends the next wait at once.
    public mutating func mark() -> UInt64 {
        lastLook = .now
        return signal?.mark() ?? 0
    }

    /// Waits for the next look: `dueIn` is how soon the worker knows work falls due, if it
    /// does. Answers whether a signal ended the wait before its time.
    @discardableResult
    public func wait(after mark: UInt64, dueIn: Duration? = nil) async -> Bool {
        guard let signal else {
            try? await Task.sleep(for: min(polling, dueIn ?? polling))
            return false
        }
        let timeout = max(.zero, min(fallback, dueIn ?? fallback))
        let start = ContinuousClock.now
        await signal.wait(after: mark, upTo: timeout)
        let woken = ContinuousClock.now - start < timeout
        if let lastLook, case let since = ContinuousClock.now - lastLook, since < pace {
            try? await Task.sleep(for: pace - since)
        }
        return woken
    }
}
