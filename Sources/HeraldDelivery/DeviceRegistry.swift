public import HeraldCore
import HeraldStorage
import Synchronization

/// Which devices hold a connection to this node, and how to wake each one.
///
/// The dispatcher wakes a device after it stored a message for it; the gateway session
/// holding the device then pulls the device's queue. One connection per device: a new
/// login replaces the old one.
public final class DeviceRegistry: Sendable {
    /// What the registry knows about one live connection.
    public struct Connection: Sendable {
        /// Unique per connection on this node.
        public var id: UInt64
        /// Asks the session to pull the device's queue.
        public var wake: @Sendable () -> Void
        /// Tells the session another connection took over its device.
        public var replace: @Sendable () -> Void
        /// Hands a message to the session for delivery now, without storing it (SEMANTICS
        /// D6); false when the device cannot take it at once (it dozes and the message is
        /// not high priority).
        public var deliverNow: @Sendable (QueuedMessage) -> Bool
        /// Tells the session an entry was stored in the device's queue, with its sequence,
        /// so that it can send it without reading the queue back.
        public var stored: @Sendable (QueuedMessage) -> Void
        /// Offers the session an entry that is being stored, with the project's pending
        /// limit (SEMANTICS D1): the session sends it at once if the entry cannot change
        /// what its queue holds, and calls `sentBeforeStored` if it did. False when the
        /// connection is gone or the device dozes.
        public var offer: @Sendable (QueuedMessage, _ maximumPending: Int) -> Bool
        /// Runs a function after a delay on the thread that reads the device's answers, so
        /// that a wait for this one device's answer is timed there and its answer takes the
        /// timer back without waking another thread. Nil (or a nil timer) when the
        /// connection cannot: the wait then times itself with a task of its own.
        public var schedule: Schedule?

        public init(
            id: UInt64, wake: @escaping @Sendable () -> Void, replace: @escaping @Sendable () -> Void,
            deliverNow: @escaping @Sendable (QueuedMessage) -> Bool = { _ in false },
            stored: (@Sendable (QueuedMessage) -> Void)? = nil,
            offer: @escaping @Sendable (QueuedMessage, Int) -> Bool = { _, _ in false },
            schedule: Schedule? = nil
        ) {
            self.id = id
            self.wake = wake
            self.replace = replace
            self.deliverNow = deliverNow
            self.stored = stored ?? { _ in wake() }
            self.offer = offer
            self.schedule = schedule
        }
    }

    /// Sets a timer that runs `body` after `delay`, unless it is cancelled first.
    public typealias Schedule = @Sendable (_ delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any Timer)?

    /// A timer set by a connection's `schedule`.
    public protocol Timer: Sendable {
        /// Takes the timer back; nothing happens if it has fired already.
        func cancel()
    }

    /// Where an entry offered before it was stored stands.
    enum Offer {
        /// Handed to the session, which has not sent it yet; the settlement of its page,
        /// if the page waits for its devices' answers.
        case offered(Settlement?)
        /// Sent to the device; its row may not be written yet.
        case sent(Settlement?)
        /// The device acknowledged it before its row was written: the row is deleted once
        /// it is, or never written if the page still waits (`store(_:maximumPending:settle:with:)`).
        case acknowledged
    }

    /// How many offers of one page the sessions and devices have not answered yet: a
    /// session that declines answers at once, a device by acknowledging.
    final class Settlement: Sendable {
        private let unanswered = Atomic<Int>(0)
        /// Sends and answers so far: while it grows, the page's devices are being reached.
        private let events = Atomic<Int>(0)
        /// Times the waiter's naps: the schedule of the one connection the page was offered
        /// to, or nil for a task of their own.
        private let schedule: Schedule?

        init(schedule: Schedule? = nil) {
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
            var timer: (any Timer)?
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
                waiter -> (CheckedContinuation<Void, Never>?, (any Timer)?) in
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

    /// Offers by device and persistent id: a device's acknowledgements touch its own only.
    private let offers: Mutex<[OfferKey: Offer]> = Mutex([:])

    struct OfferKey: Hashable {
        var androidID: UInt64
        var persistentID: String

        init(_ entry: QueuedMessage) {
            self.init(androidID: entry.androidID, persistentID: entry.persistentID)
        }

        init(androidID: UInt64, persistentID: String) {
            self.androidID = androidID
            self.persistentID = persistentID
        }
    }
    /// Writes acknowledgements that arrived before their rows (the gateway's batcher).
    private let acknowledgementWriter: Mutex<Box<@Sendable (UInt64, [String]) -> Void>?> = Mutex(nil)

    private let connections: Mutex<[UInt64: Connection]> = Mutex([:])
    /// Told about devices that got messages but hold no connection here, when several
    /// nodes share the store (another node may hold them).
    private let elsewhere: Mutex<ElsewhereHandler?> = Mutex(nil)
    private typealias ElsewhereHandler = Box<@Sendable (UInt64) -> Void>

    /// A handler in a box: a function kept directly in a `Mutex` is wrapped in one more
    /// conversion thunk by every `withLock` that reads it, so calls grow slower without end.
    final class Box<Handler: Sendable>: Sendable {
        let handler: Handler

        init(_ handler: Handler) {
            self.handler = handler
        }
    }

    public init() {}

    /// Records the connection a device logged in on; the one it replaces, if any, is told.
    public func register(androidID: UInt64, _ connection: Connection) {
        let previous = connections.withLock { $0.updateValue(connection, forKey: androidID) }
        if let previous, previous.id != connection.id { previous.replace() }
    }

    /// Forgets a connection, unless the device has logged in again on another one since.
    public func unregister(androidID: UInt64, connectionID: UInt64) {
        connections.withLock { connections in
            if connections[androidID]?.id == connectionID { connections[androidID] = nil }
        }
    }

    /// Tells the connection holding a device about entries just stored in its queue (the
    /// `stored` rows of one `Enqueued`, which all belong to one device); false when no
    /// connection here holds it, in which case the `elsewhere` handler hears of the device.
    @discardableResult
    public func stored(_ entries: [QueuedMessage]) -> Bool {
        guard let first = entries.first else { return false }
        return announce(
            entries, to: connections.withLock { $0[first.androidID] }, elsewhere: elsewhere.withLock { $0 })
    }

    /// `stored(_:)` with the device's connection and the `elsewhere` handler already looked up.
    private func announce(_ entries: [QueuedMessage], to connection: Connection?, elsewhere: ElsewhereHandler?) -> Bool
    {
        guard let first = entries.first else { return false }
        guard let connection else {
            elsewhere?.handler(first.androidID)
            return false
        }
        for entry in entries { connection.stored(entry) }
        return true
    }

    /// Sets who hears of devices that got messages while connected to no session here.
    public func forwardElsewhere(_ handler: @escaping @Sendable (UInt64) -> Void) {
        elsewhere.withLock { $0 = Box(handler) }
    }

    // MARK: Sent before stored

    /// How long a page waits for the answers of the devices it was offered to.
    public struct Settle: Sendable {
        /// The wait ends when no answer came for this long,
        public var quiet: Duration
        /// and after this long in all.
        public var limit: Duration

        public init(quiet: Duration, limit: Duration) {
            self.quiet = quiet
            self.limit = limit
        }
    }

    /// Writes queue entries with `write`, offering each to the session of its device while
    /// it runs (`offerBeforeStoring`), then tells the sessions what was stored (`stored`,
    /// or `storedAfterOffer` for an offered entry). Entries that carry a "messages deleted"
    /// count are neither offered nor announced: the session reads them from the queue.
    ///
    /// With `settle`, the write waits until the devices offered an entry have answered (or
    /// `settle` ends the wait): an entry its device acknowledged meanwhile, and that cannot
    /// change what its queue holds (it has no collapse key), is not written at all, since
    /// its row would only be deleted again. `write` gets the entries to write and those
    /// acknowledged instead, which still count as delivered (SEMANTICS L7).
    public func store(
        _ entries: [QueuedMessage], maximumPending: Int, settle: Settle? = nil,
        with write: @Sendable (_ entries: [QueuedMessage], _ acknowledged: [QueuedMessage]) async throws -> [Enqueued]
    ) async throws {
        // A fanout page holds thousands of entries: the connections are looked up under one lock.
        let holdersBefore = holders(of: entries)
        // One entry (a send to one device) is timed on its connection's own thread.
        let settlement = settle.map { _ in Settlement(schedule: entries.count == 1 ? holdersBefore[0]?.schedule : nil) }
        var offered = entries.indices.map { index in
            guard entries[index].deletedCount == 0, let holder = holdersBefore[index] else { return false }
            return offer(entries[index], to: holder, maximumPending: maximumPending, settlement: settlement)
        }
        var written = entries
        var acknowledged: [QueuedMessage] = []
        if let settle, let settlement, offered.contains(true) {
            await settlement.wait(quiet: settle.quiet, limit: settle.limit)
            let settled = settledOffers(entries, offered: offered)
            if settled.contains(true) {
                written = []
                var stillOffered: [Bool] = []
                for index in entries.indices {
                    if settled[index] {
                        acknowledged.append(entries[index])
                    } else {
                        written.append(entries[index])
                        stillOffered.append(offered[index])
                    }
                }
                offered = stillOffered
            }
        }
        var enqueued: [Enqueued] = []
        defer {
            // Offers the write did not answer (it failed) are forgotten.
            for index in written.indices.dropFirst(enqueued.count) where offered[index] { withdraw(written[index]) }
        }
        enqueued = try await write(written, acknowledged)
        // Looked up again: a device may have connected here while the rows were written.
        let holdersAfter = holders(of: written)
        let elsewhere = elsewhere.withLock { $0 }
        for (index, outcome) in zip(written.indices, enqueued) where written[index].deletedCount == 0 {
            if offered[index] {
                storedAfterOffer(written[index], stored: outcome.stored)
            } else {
                // An entry's stored rows are its device's.
                _ = announce(outcome.stored, to: holdersAfter[index], elsewhere: elsewhere)
            }
        }
    }

    /// Which offered entries their devices acknowledged and need no row: those without a
    /// collapse key (one with a key may still replace an older row of its device). Their
    /// offers are forgotten here.
    private func settledOffers(_ entries: [QueuedMessage], offered: [Bool]) -> [Bool] {
        offers.withLock { offers in
            entries.indices.map { index in
                guard offered[index], entries[index].collapseKey == nil else { return false }
                let key = OfferKey(entries[index])
                guard case .acknowledged = offers[key] else { return false }
                offers[key] = nil
                return true
            }
        }
    }

    /// The connection holding each entry's device, if one here does.
    private func holders(of entries: [QueuedMessage]) -> [Connection?] {
        connections.withLock { connections in entries.map { connections[$0.androidID] } }
    }

    /// Offers the session holding the entry's device a message while its row is being
    /// written, so that a connected device does not wait for the write; answers whether a
    /// session here was offered it. `store(_:maximumPending:with:)` then calls
    /// `storedAfterOffer(_:stored:)` with what the write stored, or `withdraw(_:)` if the
    /// write failed.
    func offerBeforeStoring(_ entry: QueuedMessage, maximumPending: Int) -> Bool {
        guard let connection = connections.withLock({ $0[entry.androidID] }) else { return false }
        return offer(entry, to: connection, maximumPending: maximumPending, settlement: nil)
    }

    private func offer(
        _ entry: QueuedMessage, to connection: Connection, maximumPending: Int, settlement: Settlement?
    ) -> Bool {
        // Recorded before the session can see it, so that its acknowledgement finds it.
        settlement?.add()
        offers.withLock { $0[OfferKey(entry)] = .offered(settlement) }
        guard connection.offer(entry, maximumPending) else {
            withdraw(entry)
            settlement?.answer()
            return false
        }
        return true
    }

    /// Called by the session that sent an offered entry, before the device can answer it.
    public func sentBeforeStored(_ entry: QueuedMessage) {
        let key = OfferKey(entry)
        offers.withLock { offers in
            guard case .offered(let settlement) = offers[key] else { return }
            offers[key] = .sent(settlement)
            settlement?.sent()
        }
    }

    /// Called by a session that took an offered entry but did not send it (its device
    /// dozes, its window is full, or it has older messages to read first): the entry is
    /// written and announced as any other, and its page waits no longer for it.
    public func declinedBeforeStored(_ entry: QueuedMessage) {
        let key = OfferKey(entry)
        let settlement: Settlement? = offers.withLock { offers in
            guard case .offered(let settlement?) = offers[key] else { return nil }
            offers[key] = .offered(nil)
            return settlement
        }
        settlement?.answer()
    }

    /// The acknowledged ids whose rows may be deleted now: all but those sent before their
    /// rows were written, whose deletion waits for the write (`storedAfterOffer`).
    public func acknowledgementsToWrite(androidID: UInt64, _ persistentIDs: [String]) -> [String] {
        var answered: [Settlement] = []
        let ready = offers.withLock { offers in
            guard !offers.isEmpty else { return persistentIDs }
            return persistentIDs.filter { id in
                let key = OfferKey(androidID: androidID, persistentID: id)
                guard case .sent(let settlement) = offers[key] else { return true }
                offers[key] = .acknowledged
                if let settlement { answered.append(settlement) }
                return false
            }
        }
        for settlement in answered { settlement.answer() }
        return ready
    }

    /// After the write of an offered entry: the session is told of the rows as `stored`
    /// tells it, except the offered one if the device acknowledged it meanwhile, whose
    /// row is deleted instead.
    func storedAfterOffer(_ offered: QueuedMessage, stored entries: [QueuedMessage]) {
        let state = offers.withLock { $0.removeValue(forKey: OfferKey(offered)) }
        guard case .acknowledged = state else {
            stored(entries)
            return
        }
        let acknowledged = entries.filter { $0.persistentID == offered.persistentID }
        if !acknowledged.isEmpty {
            acknowledgementWriter.withLock { $0 }?.handler(offered.androidID, acknowledged.map(\.persistentID))
        }
        stored(entries.filter { $0.persistentID != offered.persistentID })
    }

    /// Forgets an offer whose write failed.
    func withdraw(_ offered: QueuedMessage) {
        _ = offers.withLock { $0.removeValue(forKey: OfferKey(offered)) }
    }

    /// Sets who deletes the rows of entries acknowledged before they were written.
    public func writeAcknowledgements(_ handler: @escaping @Sendable (UInt64, [String]) -> Void) {
        acknowledgementWriter.withLock { $0 = Box(handler) }
    }

    /// Asks the session holding a device to read its queue; false when none holds it here.
    @discardableResult
    public func wake(androidID: UInt64) -> Bool {
        guard let connection = connections.withLock({ $0[androidID] }) else { return false }
        connection.wake()
        return true
    }

    /// Delivers a message now to a connected device that can take it; false otherwise.
    public func deliverNow(androidID: UInt64, _ message: QueuedMessage) -> Bool {
        guard let connection = connections.withLock({ $0[androidID] }) else { return false }
        return connection.deliverNow(message)
    }

    /// Asks every session here to read its queue.
    public func wakeAll() {
        for connection in connections.withLock({ Array($0.values) }) { connection.wake() }
    }

    /// The devices holding a connection here, in ascending order.
    public func connectedDevices() -> [UInt64] {
        connections.withLock { Array($0.keys) }.sorted()
    }

    /// Whether a device holds a connection here.
    public func isConnected(androidID: UInt64) -> Bool {
        connections.withLock { $0[androidID] != nil }
    }

    /// How many devices are connected.
    public var count: Int { connections.withLock { $0.count } }
}
