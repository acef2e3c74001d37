import Foundation
import HeraldCore
import Synchronization
import Testing

@testable import HeraldDelivery

/// The delivery path's side of "offered while stored": a message to a device connected here goes
/// out while its row is written (SEMANTICS L2), and its acknowledgement still deletes the row
/// (L4) however the two cross.
@Suite(.serialized) struct DeliveryPathTests {
    /// Waits until `condition` holds, thirty seconds at most.
    func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "condition not met in 30 s")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// What a path hands to a session and to the acknowledgement writer.
    final class Recorder: Sendable {
        let offered = Mutex<[String]>([])
        let stored = Mutex<[String]>([])
        let written = Mutex<[String]>([])
        /// Each acknowledgement written, with its device.
        let writes = Mutex<[String]>([])

        var writer: ClosureAcknowledgementWriter {
            ClosureAcknowledgementWriter { androidID, ids in
                self.written.withLock { $0 += ids }
                self.writes.withLock { $0 += ids.map { "\(androidID):\($0)" } }
            }
        }
    }

    func path(_ recorder: Recorder, elsewhere: (@Sendable (UInt64) -> Void)? = nil) -> DeliveryPath {
        let path = DeliveryPath(acknowledgements: recorder.writer, elsewhere: elsewhere)
        path.register(
            androidID: 7,
            ClosureMailbox(
                id: 1, wake: {}, replace: {},
                stored: { entry in recorder.stored.withLock { $0.append(entry.persistentID) } },
                offer: { entry, _ in
                    recorder.offered.withLock { $0.append(entry.persistentID) }
                    return true
                }))
        return path
    }

    func entry(_ persistentID: String, sequence: Int64 = 0, androidID: UInt64 = 7) -> QueuedMessage {
        QueuedMessage(
            sequence: sequence, androidID: androidID, token: "t", persistentID: persistentID,
            messageID: persistentID, projectID: "p", stanza: [1], createdAt: Timestamp(seconds: 0),
            expiresAt: Timestamp(seconds: 60))
    }

    func enqueued(_ rows: QueuedMessage...) -> Enqueued {
        Enqueued(decision: QueuePolicy.Decision(), stored: rows)
    }

    @Test func L4_anAcknowledgementThatOvertakesTheWriteDeletesTheRowOnceItIsWritten() {
        let recorder = Recorder()
        let path = path(recorder)
        let offers = path.offer([entry("a")], maximumPending: 100)
        #expect(recorder.offered.withLock { $0 } == ["a"])
        path.taken(androidID: 7, persistentID: "a")
        // Another device naming the id changes nothing of this one's.
        path.acknowledged(androidID: 8, ["a"])
        #expect(recorder.writes.withLock { $0 } == ["8:a"])
        // The device acknowledges before the row exists: nothing to delete yet.
        path.acknowledged(androidID: 7, ["a", "b"])
        #expect(recorder.writes.withLock { $0 } == ["8:a", "7:b"])
        // The write ends: the row goes to the acknowledgement writer, not to the session.
        path.written(offers, [enqueued(entry("a", sequence: 9))])
        #expect(recorder.writes.withLock { $0 } == ["8:a", "7:b", "7:a"])
        #expect(recorder.stored.withLock { $0 }.isEmpty)
        // Forgotten afterwards: a repeated acknowledgement is written as any other.
        path.acknowledged(androidID: 7, ["a"])
        #expect(recorder.writes.withLock { $0 }.last == "7:a")
    }

    @Test func L4_aRowWrittenBeforeItsAcknowledgementIsAnnouncedToTheSession() {
        let recorder = Recorder()
        let elsewhere = Mutex<[UInt64]>([])
        let path = path(recorder) { androidID in elsewhere.withLock { $0.append(androidID) } }
        let offers = path.offer([entry("a")], maximumPending: 100)
        path.taken(androidID: 7, persistentID: "a")
        path.written(offers, [enqueued(entry("a", sequence: 9))])
        #expect(recorder.stored.withLock { $0 } == ["a"])
        path.acknowledged(androidID: 7, ["a"])
        #expect(recorder.written.withLock { $0 } == ["a"])
        // An offer the session did not take is never held back; a failed write forgets it.
        let failed = path.offer([entry("c")], maximumPending: 100)
        path.acknowledged(androidID: 7, ["c"])
        #expect(recorder.written.withLock { $0 } == ["a", "c"])
        path.written(failed, [])
        // No connection here: nothing is offered, and the node holding the device is told.
        let away = path.offer([entry("d", androidID: 8)], maximumPending: 100)
        #expect(recorder.offered.withLock { $0 } == ["a", "c"])
        path.written(away, [enqueued(entry("d", sequence: 1, androidID: 8))])
        #expect(elsewhere.withLock { $0 } == [8])
    }

    /// A producer's write that fails still ends its offers: `deliver` tells the path, which
    /// forgets them, and an acknowledgement held for a row that is never written.
    @Test func L4_aFailedWriteThroughDeliverForgetsItsOffers() async throws {
        struct WriteFailed: Error {}
        let recorder = Recorder()
        let path = path(recorder)
        await #expect(throws: WriteFailed.self) {
            try await path.deliver([entry("a")], maximumPending: 100) { toWrite, acknowledged in
                #expect(toWrite.map(\.persistentID) == ["a"] && acknowledged.isEmpty)
                path.taken(androidID: 7, persistentID: "a")
                // While the write is under way, the acknowledgement waits for the row.
                path.acknowledged(androidID: 7, ["a"])
                #expect(recorder.writes.withLock { $0 }.isEmpty && path.openCount.offers == 1)
                throw WriteFailed()
            }
        }
        // No row was written, so none is deleted; the offer is gone.
        #expect(recorder.writes.withLock { $0 }.isEmpty)
        #expect(path.openCount == (0, 0))
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

        final class Timer: DeliveryPath.Timer {
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

        func schedule(_ delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any DeliveryPath.Timer)? {
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

    func path(_ recorder: Recorder, schedule: DeliveryPath.Schedule?) -> DeliveryPath {
        let path = DeliveryPath(acknowledgements: recorder.writer)
        path.register(
            androidID: 7,
            ClosureMailbox(
                id: 1, wake: {}, replace: {},
                offer: { entry, _ in
                    recorder.offered.withLock { $0.append(entry.persistentID) }
                    return true
                }, schedule: schedule))
        return path
    }

    /// Offers one entry with a wait for its device's answer, as a one-to-one send does;
    /// answers what the producer then writes and what it counts as acknowledged.
    func offerWaiting(
        _ path: DeliveryPath, _ entry: QueuedMessage, wait: DeliveryPath.Settle
    ) async -> (written: [String], acknowledged: [String]) {
        let settled = await path.settle(path.offer([entry], maximumPending: 100, settle: wait))
        return (settled.toWrite.map(\.persistentID), settled.acknowledged.map(\.persistentID))
    }

    /// L7: a send to one connected device times its wait on the connection's own timer,
    /// which the device's acknowledgement takes back: it never fires, and no row is written.
    @Test func L7_anAcknowledgementCancelsTheTimerItsConnectionSetForTheWait() async throws {
        let recorder = Recorder()
        let timers = Timers(fires: false)
        let path = path(recorder, schedule: timers.schedule)
        // A timer that never fires: only the acknowledgement can end this wait.
        let send = Task {
            await offerWaiting(path, entry("a"), wait: DeliveryPath.Settle(quiet: .seconds(5), limit: .seconds(5)))
        }
        try await waitUntil { timers.set.load(ordering: .relaxed) == 1 }
        path.taken(androidID: 7, persistentID: "a")
        path.acknowledged(androidID: 7, ["a"])
        #expect(recorder.written.withLock { $0 }.isEmpty)
        let outcome = await send.value
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
        let schedule: DeliveryPath.Schedule = { delay, body in
            connectionTimes ? timers.schedule(delay, body) : nil
        }
        let path = path(recorder, schedule: schedule)
        let started = ContinuousClock.now
        let send = Task {
            await offerWaiting(
                path, entry("a"), wait: DeliveryPath.Settle(quiet: .milliseconds(20), limit: .seconds(60)))
        }
        try await waitUntil { recorder.offered.withLock { $0 } == ["a"] }
        path.taken(androidID: 7, persistentID: "a")
        let outcome = await send.value
        #expect(outcome.written == ["a"] && outcome.acknowledged.isEmpty)
        // Ended by the quiet time, not the limit: half the limit leaves room for a run of
        // the whole suite, which can keep a task from running for seconds.
        #expect(ContinuousClock.now - started < .seconds(30))
        if connectionTimes {
            #expect(timers.fired.load(ordering: .relaxed) >= 1)
        }
        // The acknowledgement that comes after the write is written as any other.
        let offers = path.offer([entry("b")], maximumPending: 100)
        path.taken(androidID: 7, persistentID: "b")
        path.written(offers, [enqueued(entry("b", sequence: 3))])
        path.acknowledged(androidID: 7, ["b"])
        #expect(recorder.written.withLock { $0 } == ["b"])
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
