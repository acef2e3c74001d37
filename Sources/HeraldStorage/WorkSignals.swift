public import HeraldCore

/// The background work a store's writes create, each kind with the signal that wakes whoever
/// does it: a write that creates work wakes its worker at once, so workers wait for a signal
/// (with a slow look now and then as a fallback) instead of asking the store every few
/// hundred milliseconds.
///
/// The embedded store wakes them after each commit of this process (`WorkObserver`), and its
/// credential refresher when another process wrote (`SQLiteStore.lookForOtherWriters`); the
/// shared store hears every node's commits through PostgreSQL's `NOTIFY` (`PostgresStore`).
public final class WorkSignals: Sendable {
    /// A kind of work a write creates.
    public enum Work: String, CaseIterable, Sendable {
        /// New events, for the event streams, or a webhook created or resumed that may want them.
        case events
        /// Queue entries for app instances reached through another push service.
        case handOffs = "hand-offs"
        /// A send scheduled for later.
        case scheduled
        /// Projects or keys changed: the credential cache reloads.
        case credentials
        /// Another node published its quota counts (several nodes only).
        case quotas
    }

    private let signals: [WakeSignal]

    public init() {
        signals = Work.allCases.map { _ in WakeSignal() }
    }

    /// The signal of one kind of work.
    public subscript(work: Work) -> WakeSignal {
        signals[Work.allCases.firstIndex(of: work)!]
    }

    /// Whether `queue` holds an entry for an app instance of another push service: work for
    /// the hand-off forwarder.
    public static func handsOff(_ queue: [QueuedMessage]) -> Bool {
        queue.contains { Device.isHandOff($0.androidID) }
    }

    /// Wakes the workers of each kind in `works`.
    public func wake(_ works: some Sequence<Work>) {
        for work in works { self[work].wake() }
    }

    /// Wakes every worker: after signals may have been missed (a lost `LISTEN` connection).
    public func wakeAll() {
        for signal in signals { signal.wake() }
    }
}
