public import HeraldCore
public import HeraldStorage
public import ServiceLifecycle
import Synchronization

/// A node's one reader of new events for all its open event streams: one store query a look,
/// however many streams are open. It looks when its store writes (an embedded store wakes it)
/// and at least every `fallback`, or every `interval` on a store other nodes write too; with
/// no stream open it does not look at all. Each stream takes the events of its project.
public final class EventTail: Service, Sendable {
    /// How often a store other nodes write is looked at.
    public static let interval: Duration = .milliseconds(200)
    /// How often an embedded store is looked at with no write to wake the tail.
    public static let fallback: Duration = .seconds(5)
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
        let writes = store.writes
        // A graceful shutdown cancels the loop, and with it any wait.
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let written = writes?.mark()
                let opening = self.opened.mark()
                guard let cursor = self.state.withLock({ $0.streams.isEmpty ? nil : $0.cursor }) else {
                    await self.opened.wait(after: opening, upTo: .seconds(60))
                    continue
                }
                let found =
                    (try? await self.store.settledEvents(after: cursor, limit: Self.batch, now: self.clock.now())) ?? []
                self.handOut(found, after: cursor)
                if found.count == Self.batch { continue }
                if let writes, let written {
                    await writes.wait(after: written, upTo: Self.fallback)
                } else {
                    try? await Task.sleep(for: Self.interval)
                }
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
