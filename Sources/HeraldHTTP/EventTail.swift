public import HeraldCore
public import HeraldStorage
public import ServiceLifecycle
import Synchronization

/// A node's one reader of new events for all its open event streams: one store query a look,
/// however many streams are open. It looks when a commit wrote events (`WorkSignals`), when
/// events it saw too recent to be sure of have settled, and at least every
/// `WorkWaiter.defaultFallback`; every `interval` on a store that gives no signal. With no
/// stream open it does not look at all. Each stream takes the events of its project.
public final class EventTail: Service, Sendable {
    /// How often a store that gives no signal is looked at.
    public static let interval: Duration = .milliseconds(200)
    /// Events read at once.
    static let batch = 1_000

    private struct State {
        /// Events through this sequence number were handed out; nil while no stream is open.
        var cursor: Int64?
        var streams: [UInt64: EventTailSubscription] = [:]
        var nextID: UInt64 = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let store: any EventStore
    private let clock: any HeraldClock
    /// Wakes the tail when the first stream opens.
    private let opened = WakeSignal()

    public init(store: any EventStore, clock: any HeraldClock) {
        self.store = store
        self.clock = clock
    }

    /// Joins a stream of `projectID` to the tail. The stream reads the events through its
    /// `joinedThrough` itself; the tail hands it every later event of its project.
    public func subscribe(projectID: String) async throws -> EventTailSubscription {
        let latest = state.withLock { $0.cursor } == nil ? try await store.latestEventSequence() : 0
        let subscription = state.withLock { state -> EventTailSubscription in
            if state.cursor == nil { state.cursor = latest }
            state.nextID += 1
            let id = state.nextID
            let subscription = EventTailSubscription(
                projectID: projectID, joinedThrough: state.cursor ?? latest, ended: state.stopped
            ) { [weak self] in self?.leave(id) }
            if !state.stopped { state.streams[id] = subscription }
            return subscription
        }
        opened.wake()
        return subscription
    }

    private func leave(_ id: UInt64) {
        state.withLock { state in
            state.streams[id] = nil
            // With no stream left, the next one starts from the newest event, not from here.
            if state.streams.isEmpty { state.cursor = nil }
        }
    }

    public func run() async throws {
        // A graceful shutdown cancels the loop, and with it any wait.
        await cancelWhenGracefulShutdown {
            var waiter = WorkWaiter(.events, of: self.store.work, polling: Self.interval)
            while !Task.isCancelled {
                let written = waiter.mark()
                let opening = self.opened.mark()
                guard let cursor = self.state.withLock({ $0.streams.isEmpty ? nil : $0.cursor }) else {
                    await self.opened.wait(after: opening, upTo: .seconds(60))
                    continue
                }
                let now = self.clock.now()
                let found = (try? await self.store.events(after: cursor, limit: Self.batch)) ?? []
                self.handOut(self.store.settled(found, now: now), after: cursor)
                if found.count == Self.batch { continue }
                // Events too recent to be sure of are looked at again once they have settled.
                await waiter.wait(after: written, dueIn: self.store.untilSettled(found, now: now))
            }
        }
        stop()
    }

    /// Gives each stream its project's events, and moves the cursor past them, at once: a
    /// stream that joins meanwhile reads up to the new cursor itself.
    private func handOut(_ events: [MessageEvent], after cursor: Int64) {
        guard let last = events.last else { return }
        let streams = state.withLock { state -> [EventTailSubscription] in
            guard state.cursor == cursor else { return [] }
            state.cursor = last.sequence
            return Array(state.streams.values)
        }
        guard !streams.isEmpty else { return }
        var byProject: [String: [MessageEvent]] = [:]
        for event in events { byProject[event.projectID, default: []].append(event) }
        for stream in streams {
            if let mine = byProject[stream.projectID] { stream.take(mine, through: last.sequence) }
        }
    }

    /// The node stops: every stream ends, and none joins.
    private func stop() {
        let streams = state.withLock { state in
            state.stopped = true
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for stream in streams { stream.end() }
    }
}
