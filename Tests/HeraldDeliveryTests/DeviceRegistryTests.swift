import Foundation
import HeraldCore
import Synchronization
import Testing

@testable import HeraldDelivery

/// The registry's side of "offered while stored": a message to a device connected here goes
/// out while its row is written (SEMANTICS L2), and its acknowledgement still deletes the row
/// (L4) however the two cross.
@Suite(.serialized) struct DeviceRegistryTests {
    /// Waits until `condition` holds, ten seconds at most.
    func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "condition not met in 10 s")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// What a registry hands to a session and to the acknowledgement writer.
    final class Recorder: Sendable {
        let offered = Mutex<[String]>([])
        let stored = Mutex<[String]>([])
        let written = Mutex<[String]>([])
    }

    func registry(_ recorder: Recorder) -> DeviceRegistry {
        let registry = DeviceRegistry()
        registry.register(
            androidID: 7,
            ClosureMailbox(
                id: 1, wake: {}, replace: {},
                stored: { entry in recorder.stored.withLock { $0.append(entry.persistentID) } },
                offer: { entry, _ in
                    recorder.offered.withLock { $0.append(entry.persistentID) }
                    return true
                }))
        registry.writeAcknowledgements { androidID, ids in
            #expect(androidID == 7)
            recorder.written.withLock { $0 += ids }
        }
        return registry
    }

    func entry(_ persistentID: String, sequence: Int64 = 0) -> QueuedMessage {
        QueuedMessage(
            sequence: sequence, androidID: 7, token: "t", persistentID: persistentID, messageID: persistentID,
            projectID: "p", stanza: [1], createdAt: Timestamp(seconds: 0), expiresAt: Timestamp(seconds: 60))
    }

    @Test func L4_anAcknowledgementThatOvertakesTheWriteDeletesTheRowOnceItIsWritten() {
        let recorder = Recorder()
        let registry = registry(recorder)
        #expect(registry.offerBeforeStoring(entry("a"), maximumPending: 100))
        #expect(recorder.offered.withLock { $0 } == ["a"])
        registry.sentBeforeStored(entry("a"))
        // Another device naming the id changes nothing of this one's.
        #expect(registry.acknowledgementsToWrite(androidID: 8, ["a"]) == ["a"])
        // The device acknowledges before the row exists: nothing to delete yet.
        #expect(registry.acknowledgementsToWrite(androidID: 7, ["a", "b"]) == ["b"])
        // The write ends: the row goes to the acknowledgement writer, not to the session.
        registry.storedAfterOffer(entry("a"), stored: [entry("a", sequence: 9)])
        #expect(recorder.written.withLock { $0 } == ["a"])
        #expect(recorder.stored.withLock { $0 }.isEmpty)
        // Forgotten afterwards: a repeated acknowledgement is written as any other.
        #expect(registry.acknowledgementsToWrite(androidID: 7, ["a"]) == ["a"])
    }

    @Test func L4_aRowWrittenBeforeItsAcknowledgementIsAnnouncedToTheSession() {
        let recorder = Recorder()
        let registry = registry(recorder)
        #expect(registry.offerBeforeStoring(entry("a"), maximumPending: 100))
        registry.sentBeforeStored(entry("a"))
        registry.storedAfterOffer(entry("a"), stored: [entry("a", sequence: 9)])
        #expect(recorder.stored.withLock { $0 } == ["a"])
        #expect(registry.acknowledgementsToWrite(androidID: 7, ["a"]) == ["a"])
        #expect(recorder.written.withLock { $0 }.isEmpty)
        // An offer the session did not take is never held back; a failed write is forgotten.
        #expect(registry.offerBeforeStoring(entry("c"), maximumPending: 100))
        #expect(registry.acknowledgementsToWrite(androidID: 7, ["c"]) == ["c"])
        registry.withdraw(entry("c"))
        // No connection here: nothing is offered.
        var elsewhere = entry("d")
        elsewhere.androidID = 8
        #expect(!registry.offerBeforeStoring(elsewhere, maximumPending: 100))
    }

    /// Timers a test connection was asked for: each runs its function after its delay
    /// (or never, when `fires` is off) unless cancelled first.
    final class Timers: Sendable {
        let fires: Bool
        let set = Atomic<Int>(0)
        let fired = Atomic<Int>(0)
        let cancelled = Atomic<Int>(0)

        init(fires: Bool) {
            self.fires = fires
        }

        final class Timer: DeviceRegistry.Timer {
            let timers: Timers
            let pending = Atomic<Bool>(true)

            init(_ timers: Timers) {
                self.timers = timers
            }

            func cancel() {
                if pending.exchange(false, ordering: .acquiringAndReleasing) {
                    timers.cancelled.add(1, ordering: .relaxed)
                }
            }
        }

        func schedule(_ delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any DeviceRegistry.Timer)? {
            set.add(1, ordering: .relaxed)
            let timer = Timer(self)
            if fires {
                Task {
                    try await Task.sleep(for: delay)
                    guard timer.pending.exchange(false, ordering: .acquiringAndReleasing) else { return }
                    self.fired.add(1, ordering: .relaxed)
                    body()
                }
            }
            return timer
        }
    }

    func registry(_ recorder: Recorder, schedule: DeviceRegistry.Schedule?) -> DeviceRegistry {
        let registry = DeviceRegistry()
        registry.register(
            androidID: 7,
            ClosureMailbox(
                id: 1, wake: {}, replace: {},
                offer: { entry, _ in
                    recorder.offered.withLock { $0.append(entry.persistentID) }
                    return true
                }, schedule: schedule))
        return registry
    }

    /// Stores one entry with a wait for its device's answer; answers what the write was given.
    func storeWaiting(
        _ registry: DeviceRegistry, _ entry: QueuedMessage, wait: DeviceRegistry.Settle
    ) async throws -> (written: [String], acknowledged: [String]) {
        let given = Mutex<(written: [String], acknowledged: [String])>(([], []))
        try await registry.store([entry], maximumPending: 100, settle: wait) { entries, acknowledged in
            given.withLock { $0 = (entries.map(\.persistentID), acknowledged.map(\.persistentID)) }
            return []
        }
        return given.withLock { $0 }
    }

    /// L7: a send to one connected device times its wait on the connection's own timer,
    /// which the device's acknowledgement takes back: it never fires, and no row is written.
    @Test func L7_anAcknowledgementCancelsTheTimerItsConnectionSetForTheWait() async throws {
        let recorder = Recorder()
        let timers = Timers(fires: false)
        let registry = registry(recorder, schedule: timers.schedule)
        // A timer that never fires: only the acknowledgement can end this wait.
        let send = Task {
            try await storeWaiting(
                registry, entry("a"), wait: DeviceRegistry.Settle(quiet: .seconds(5), limit: .seconds(5)))
        }
        try await waitUntil { timers.set.load(ordering: .relaxed) == 1 }
        registry.sentBeforeStored(entry("a"))
        #expect(registry.acknowledgementsToWrite(androidID: 7, ["a"]).isEmpty)
        let outcome = try await send.value
        #expect(outcome.written.isEmpty && outcome.acknowledged == ["a"])
        #expect(timers.set.load(ordering: .relaxed) == 1)
        #expect(timers.cancelled.load(ordering: .relaxed) == 1)
        #expect(timers.fired.load(ordering: .relaxed) == 0)
    }

    /// L7: a device that leaves its message unanswered is waited for no longer than the
    /// wait's quiet time, by its connection's timer or, where the connection cannot set
    /// one, by a task of the wait's own; the message's row is then written.
    @Test(arguments: [true, false])
    func L7_anUnansweredWaitEndsByTheConnectionsTimerOrATaskOfItsOwn(connectionTimes: Bool) async throws {
        let recorder = Recorder()
        let timers = Timers(fires: true)
        let schedule: DeviceRegistry.Schedule = { delay, body in
            connectionTimes ? timers.schedule(delay, body) : nil
        }
        let registry = registry(recorder, schedule: schedule)
        let started = ContinuousClock.now
        let send = Task {
            try await storeWaiting(
                registry, entry("a"), wait: DeviceRegistry.Settle(quiet: .milliseconds(20), limit: .seconds(5)))
        }
        try await waitUntil { recorder.offered.withLock { $0 } == ["a"] }
        registry.sentBeforeStored(entry("a"))
        let outcome = try await send.value
        #expect(outcome.written == ["a"] && outcome.acknowledged.isEmpty)
        #expect(ContinuousClock.now - started < .seconds(5))
        if connectionTimes {
            #expect(timers.fired.load(ordering: .relaxed) >= 1)
        }
        // The acknowledgement that comes after the write is written as any other.
        registry.storedAfterOffer(entry("a"), stored: [entry("a", sequence: 3)])
        #expect(registry.acknowledgementsToWrite(androidID: 7, ["a"]) == ["a"])
    }

    /// L7: the wait `herald serve --acknowledgement-wait-ms` sets: none for 0, and never
    /// more than 1 ms after the last news from the device.
    @Test func L7_theAcknowledgementWaitIsOffAtZeroAndQuietAfterAMillisecond() throws {
        #expect(Dispatcher.acknowledgementWait(limit: .zero) == nil)
        let short = try #require(Dispatcher.acknowledgementWait(limit: .microseconds(500)))
        #expect(short.quiet == .microseconds(500) && short.limit == .microseconds(500))
        let standard = try #require(Dispatcher.defaultAcknowledgementWait)
        #expect(standard.quiet == .milliseconds(1) && standard.limit == .milliseconds(3))
    }

}
