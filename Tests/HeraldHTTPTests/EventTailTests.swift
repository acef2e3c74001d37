import Foundation
import HeraldCore
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldHTTP

/// A node's event streams share one reader: however many are open, the store is asked once
/// a look, and only when it wrote something (or every few seconds), never while none is open.
@Suite struct EventTailTests {
    /// The store's events, with each look at them counted.
    final class CountedEvents: EventStore {
        let store: SQLiteStore
        let looks = Atomic<Int>(0)

        /// A store with the projects `alpha` and `beta`, whose events the tests write.
        init() async throws {
            store = try SQLiteStore(dataDirectory: temporaryDirectory())
            for id in ["alpha", "beta"] {
                _ = try await ProjectAdministration(store: store).createProject(
                    id: id, publicURL: "http://127.0.0.1:1", keyFileDirectory: NSTemporaryDirectory())
            }
        }

        func events(projectID: String, after: Int64, limit: Int, filter: EventFilter) async throws -> [MessageEvent] {
            looks.add(1, ordering: .relaxed)
            return try await store.events(projectID: projectID, after: after, limit: limit, filter: filter)
        }

        func events(after: Int64, limit: Int) async throws -> [MessageEvent] {
            looks.add(1, ordering: .relaxed)
            return try await store.events(after: after, limit: limit)
        }

        var work: WorkSignals? { store.work }
        var eventCommitLagMilliseconds: Int64 { store.eventCommitLagMilliseconds }
        func recordEvents(_ events: [MessageEvent]) async throws { try await store.recordEvents(events) }
        func latestEventSequence() async throws -> Int64 { try await store.latestEventSequence() }
        func messageStatus(projectID: String, messageID: String) async throws -> MessageStatus? {
            try await store.messageStatus(projectID: projectID, messageID: messageID)
        }
        func deleteEvents(before: Timestamp, limit: Int) async throws -> Int {
            try await store.deleteEvents(before: before, limit: limit)
        }
    }

    func refused(_ project: String, _ n: Int) -> MessageEvent {
        MessageEvent(type: .refused, reason: "T1", projectID: project, messageID: "m\(n)", at: SystemClock().now())
    }

    /// Runs a tail over `store` for the length of `body`.
    func withTail(_ store: CountedEvents, _ body: (EventTail) async throws -> Void) async throws {
        let tail = EventTail(store: store, clock: SystemClock())
        let running = Task { try await tail.run() }
        defer { running.cancel() }
        try await body(tail)
    }

    @Test func aThousandStreamsCostOneLookAWrite() async throws {
        let store = try await CountedEvents()
        try await withTail(store) { tail in
            var streams: [EventTailSubscription] = []
            for n in 0..<1_000 { streams.append(try await tail.subscribe(projectID: n % 2 == 0 ? "alpha" : "beta")) }
            try await Task.sleep(for: .milliseconds(100))
            let before = store.looks.load(ordering: .relaxed)
            try await store.recordEvents([refused("alpha", 1), refused("beta", 2)])
            for stream in streams {
                guard case .events(let events) = await stream.next(upTo: .seconds(30)) else {
                    Issue.record("no events")
                    return
                }
                #expect(events.map(\.projectID) == [stream.projectID])
            }
            // One write, one look (two at most, if the write's wake met a look under way).
            #expect(store.looks.load(ordering: .relaxed) - before <= 2)
            for stream in streams { stream.leave() }
        }
    }

    @Test func withNoStreamOpenTheStoreIsNotAskedAndQuietItIsAskedEveryFewSeconds() async throws {
        let store = try await CountedEvents()
        try await withTail(store) { tail in
            try await Task.sleep(for: .seconds(1))
            #expect(store.looks.load(ordering: .relaxed) == 0)
            let stream = try await tail.subscribe(projectID: "alpha")
            // The stream's opening wakes the tail for one look; a run that keeps both cores
            // busy may delay that look, so it is waited for, not assumed after a set time.
            try await GatewayHarness.eventually(10) { store.looks.load(ordering: .relaxed) > 0 }
            #expect(store.looks.load(ordering: .relaxed) == 1)
            // Then quiet: no second look for two seconds (the fallback is ten).
            try await Task.sleep(for: .seconds(2))
            #expect(store.looks.load(ordering: .relaxed) == 1)
            stream.leave()
        }
    }

    @Test func aStreamJoiningLateOrFallingBehindReadsWhatItMissedItself() async throws {
        let store = try await CountedEvents()
        try await store.recordEvents([refused("alpha", 1)])
        try await withTail(store) { tail in
            let first = try await tail.subscribe(projectID: "alpha")
            #expect(first.joinedThrough == 1)
            let later = try await tail.subscribe(projectID: "alpha")
            #expect(later.joinedThrough == 1)
            // Past what a stream may hold, it is told how far the store must give it.
            let many = (0...EventTailSubscription.maximumBuffered).map { refused("alpha", $0 + 2) }
            try await store.recordEvents(many)
            try await Task.sleep(for: .seconds(1))
            #expect(await first.next(upTo: .seconds(30)) == .behind(through: Int64(many.count + 1)))
            first.leave()
            later.leave()
        }
    }

    @Test func theNodeStoppingEndsEveryStream() async throws {
        let store = try await CountedEvents()
        let tail = EventTail(store: store, clock: SystemClock())
        let running = Task { try await tail.run() }
        let stream = try await tail.subscribe(projectID: "alpha")
        running.cancel()
        #expect(await stream.next(upTo: .seconds(30)) == .ended)
    }
}
