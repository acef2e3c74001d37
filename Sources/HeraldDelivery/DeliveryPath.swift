public import HeraldCore
import Synchronization

/// The one way a stored message reaches a device connected to this node: which session holds
/// each device, and the "offered while stored" order (`OfferLedger`) by which a connected
/// device gets a message while its row is being written.
///
/// Every producer (sends of every API, fanout pages, Web Push, upstream errors) goes
/// through it in one call, which offers, settles, lets the producer write, and tells the
/// sessions what was written, whether the write succeeded or not:
///
///     let acknowledged = try await path.deliver(entries, maximumPending: limit, settle: wait) {
///         toWrite, acknowledged in try await store.appendMessages(…, queue: toWrite, …)
///     }
///
/// and every session answers it: it took or declined an offer, its device acknowledged.
/// What to do with the rows of acknowledgements, and with devices held by no session
/// here, is given at construction.
public final class DeliveryPath: Sendable {
    /// Sets a timer that runs `body` after `delay`, unless it is cancelled first.
    public typealias Schedule = @Sendable (_ delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any Timer)?

    /// A timer set by a mailbox's `schedule`.
    public protocol Timer: Sendable {
        /// Takes the timer back; nothing happens if it has fired already.
        func cancel()
    }

    /// How long a producer waits for the answers of the devices it offered entries to.
    public struct Settle: Sendable, Equatable {
        /// The wait ends when no answer came for this long,
        public var quiet: Duration
        /// and after this long in all.
        public var limit: Duration

        public init(quiet: Duration, limit: Duration) {
            self.quiet = quiet
            self.limit = limit
        }
    }

    /// The ledger, and the producers waiting on its pages.
    private struct State {
        var ledger = OfferLedger()
        var waiters: [UInt64: Waiter] = [:]
    }

    /// A producer waiting for its page, and the alarm set for it.
    private struct Waiter {
        var continuation: CheckedContinuation<Void, Never>?
        var alarm: (any Timer)?
    }

    private let connections = ConnectionRegistry()
    private let state = Mutex(State())
    /// Deletes the rows of acknowledged messages.
    private let acknowledgements: (any AcknowledgementWriter)?
    /// Hears of devices that got messages but hold no connection here, when several nodes
    /// share the store (another node may hold them).
    private let elsewhere: (@Sendable (UInt64) -> Void)?
    private let clock: any HeraldClock

    public init(
        acknowledgements: (any AcknowledgementWriter)? = nil, elsewhere: (@Sendable (UInt64) -> Void)? = nil,
        clock: any HeraldClock = SystemClock()
    ) {
        self.acknowledgements = acknowledgements
        self.elsewhere = elsewhere
        self.clock = clock
    }

    // MARK: Connections

    /// Records the session a device logged in on; the one it replaces, if any, is told.
    public func register(androidID: UInt64, _ mailbox: any DeviceMailbox) {
        connections.register(androidID: androidID, mailbox)
    }

    /// Forgets a connection, unless the device has logged in again on another one since.
    public func unregister(androidID: UInt64, connectionID: UInt64) {
        connections.unregister(androidID: androidID, connectionID: connectionID)
    }

    /// Asks the session holding a device to read its queue; false when none holds it here.
    @discardableResult
    public func wake(androidID: UInt64) -> Bool {
        guard let mailbox = connections.mailbox(of: androidID) else { return false }
        mailbox.wake()
        return true
    }

    /// Delivers a message now to a connected device that can take it; false otherwise.
    public func deliverNow(androidID: UInt64, _ message: QueuedMessage) -> Bool {
        connections.mailbox(of: androidID)?.deliverNow(message) ?? false
    }

    /// Asks every session here to read its queue.
    public func wakeAll() {
        for mailbox in connections.all() { mailbox.wake() }
    }

    /// The devices holding a connection here, in ascending order.
    public func connectedDevices() -> [UInt64] { connections.devices() }

    /// Whether a device holds a connection here.
    public func isConnected(androidID: UInt64) -> Bool { connections.contains(androidID) }

    /// How many devices are connected.
    public var count: Int { connections.count }

    /// How many offers and producers' pages are open: none once every write has ended.
    var openCount: (offers: Int, pages: Int) { state.withLock { $0.ledger.openCount } }

    // MARK: Producers

    /// Delivers entries: offers each to the session holding its device (`offer`), waits for
    /// the devices' answers when `settle` is given (`settle`), runs `write` with the entries
    /// that still need a row and those acknowledged meanwhile, which need none and count as
    /// delivered (SEMANTICS L7), and then tells the sessions what was written (`written`),
    /// also when `write` throws: the offers of a failed write are forgotten. `write` answers
    /// the rows stored, one per entry of `toWrite`. Answers the entries acknowledged before
    /// their row was written.
    @discardableResult
    public func deliver(
        _ entries: [QueuedMessage], maximumPending: Int, settle: Settle? = nil,
        isolation: isolated (any Actor)? = #isolation,
        write: (_ toWrite: [QueuedMessage], _ acknowledged: [QueuedMessage]) async throws -> [Enqueued]
    ) async throws -> [QueuedMessage] {
        let settled = await self.settle(offer(entries, maximumPending: maximumPending, settle: settle))
        var enqueued: [Enqueued] = []
        defer { written(settled, enqueued) }
        enqueued = try await write(settled.toWrite, settled.acknowledged)
        return settled.acknowledged
    }

    /// Offers each entry to the session holding its device, before its row is written, so
    /// that a connected device does not wait for the write. Entries that carry a "messages
    /// deleted" count are not offered: the session reads them from the queue. With
    /// `settle`, `settle(_:)` then waits for the devices' answers.
    func offer(_ entries: [QueuedMessage], maximumPending: Int, settle: Settle? = nil) -> Offers {
        let holders = connections.mailboxes(of: entries)
        var offers = Offers(entries)
        let offered = entries.indices.filter { entries[$0].deletedCount == 0 && holders[$0] != nil }
        guard !offered.isEmpty else { return offers }
        // One entry (a send to one device) is timed on its connection's own thread.
        if settle != nil, entries.count == 1 { offers.timekeeper = holders[0] }
        // Recorded, under one lock for the whole page, before any session can see them, so
        // that their answers find them.
        offers.page = state.withLock { state in
            let page = settle.map { state.ledger.openPage($0, now: clock.uptime()) }
            for index in offered { state.ledger.offer(OfferLedger.Key(entries[index]), page: page) }
            return page
        }
        for index in offered {
            if holders[index]?.offer(entries[index], maximumPending: maximumPending) == true {
                offers.offered[index] = true
            } else {
                perform(state.withLock { $0.ledger.refused(OfferLedger.Key(entries[index])) })
            }
        }
        return offers
    }

    /// Waits until the devices offered entries have answered, or the producer's `Settle`
    /// ends the wait. An entry its device acknowledged meanwhile, and that cannot change
    /// what its queue holds (it has no collapse key), needs no row: it moves from `toWrite`
    /// to `acknowledged`, which still counts as delivered (SEMANTICS L7).
    func settle(_ offers: Offers) async -> Offers {
        guard let page = offers.page else { return offers }
        let firstAlarm = state.withLock { state -> Duration? in
            guard case .setAlarm(_, let at)? = state.ledger.wait(page: page, now: clock.uptime()).first else {
                return nil
            }
            state.waiters[page] = Waiter()
            return at
        }
        if let firstAlarm {
            // Timed on the connection's thread when one device's answer is awaited (the
            // acknowledgement that takes the alarm back is read there); otherwise by a child
            // task of the producer's own.
            if let timekeeper = offers.timekeeper, setAlarm(page: page, at: firstAlarm, on: timekeeper) {
                await released(page)
            } else {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.ringAlarms(page: page, from: firstAlarm) }
                    await released(page)
                    group.cancelAll()
                }
            }
        }
        let keys = offers.toWrite.indices.map { index -> OfferLedger.Key? in
            guard offers.offered[index], offers.toWrite[index].collapseKey == nil else { return nil }
            return OfferLedger.Key(offers.toWrite[index])
        }
        let settled = state.withLock { $0.ledger.closePage(page, keys: keys) }
        var result = offers
        result.page = nil
        result.timekeeper = nil
        guard settled.contains(true) else { return result }
        result.toWrite = []
        result.offered = []
        for index in offers.toWrite.indices {
            if settled[index] {
                result.acknowledged.append(offers.toWrite[index])
            } else {
                result.toWrite.append(offers.toWrite[index])
                result.offered.append(offers.offered[index])
            }
        }
        return result
    }

    /// After the write of `offers.toWrite`: tells the sessions of the rows stored (`enqueued`,
    /// one per entry), except an offered entry whose device acknowledged it meanwhile, whose
    /// row is deleted instead. Devices no session here holds are told to `elsewhere`. The
    /// offers of entries the write did not answer (all of them when it failed) are forgotten.
    func written(_ offers: Offers, _ enqueued: [Enqueued]) {
        let answered = settleLedger(offers, writtenCount: enqueued.count)
        // Looked up again: a device may have connected here while the rows were written.
        let holders = connections.mailboxes(of: offers.toWrite)
        for (index, outcome) in zip(offers.toWrite.indices, enqueued) where offers.toWrite[index].deletedCount == 0 {
            var rows = outcome.stored
            let entry = offers.toWrite[index]
            if answered[index] {
                let acknowledged = rows.filter { $0.persistentID == entry.persistentID }
                if !acknowledged.isEmpty {
                    acknowledgements?.submit(
                        androidID: entry.androidID, persistentIDs: acknowledged.map(\.persistentID))
                }
                rows.removeAll { $0.persistentID == entry.persistentID }
            }
            announce(rows, to: holders[index])
        }
    }

    /// Tells the ledger, under one lock for the page, which offers were written and which
    /// were not (`writtenCount` entries were, in order); answers, per entry, whether its
    /// device acknowledged it before its row was written.
    private func settleLedger(_ offers: Offers, writtenCount: Int) -> [Bool] {
        guard offers.offered.contains(true) else { return Array(repeating: false, count: offers.toWrite.count) }
        return state.withLock { state in
            offers.toWrite.indices.map { index in
                guard offers.offered[index] else { return false }
                let key = OfferLedger.Key(offers.toWrite[index])
                guard index < writtenCount else {
                    state.ledger.withdraw(key)
                    return false
                }
                return offers.toWrite[index].deletedCount == 0 && state.ledger.written(key)
            }
        }
    }

    /// Tells the session holding a device of rows just stored in its queue (all its own);
    /// with no session here, `elsewhere` hears of the device.
    private func announce(_ rows: [QueuedMessage], to mailbox: (any DeviceMailbox)?) {
        guard let first = rows.first else { return }
        guard let mailbox else {
            elsewhere?(first.androidID)
            return
        }
        for row in rows { mailbox.stored(row) }
    }

    // MARK: Sessions

    /// A session sent an offered entry, before its device can answer it.
    public func taken(androidID: UInt64, persistentID: String) {
        let now = clock.uptime()
        state.withLock { $0.ledger.taken(OfferLedger.Key(androidID: androidID, persistentID: persistentID), now: now) }
    }

    /// A session took an offered entry but did not send it (its device dozes, its window is
    /// full, or it has older messages to read first): the entry is written and announced as
    /// any other, and its producer waits no longer for it.
    public func declined(androidID: UInt64, persistentID: String) {
        let now = clock.uptime()
        perform(
            state.withLock {
                $0.ledger.declined(OfferLedger.Key(androidID: androidID, persistentID: persistentID), now: now)
            })
    }

    /// A device acknowledged messages: their rows are deleted, now or, for rows still being
    /// written, once they are (`stored`).
    public func acknowledged(androidID: UInt64, _ persistentIDs: [String]) {
        guard !persistentIDs.isEmpty else { return }
        let now = clock.uptime()
        perform(state.withLock { $0.ledger.acknowledged(androidID: androidID, persistentIDs, now: now) })
    }

    // MARK: Carrying out the ledger's actions

    private func perform(_ actions: [OfferLedger.Action], timekeeper: (any DeviceMailbox)? = nil) {
        for action in actions {
            switch action {
            case .release(let page):
                let waiter = state.withLock { $0.waiters.removeValue(forKey: page) }
                waiter?.alarm?.cancel()
                waiter?.continuation?.resume()
            case .setAlarm(let page, let at):
                // Only a connection's alarm rings here (`ringAlarms` keeps its own); one its
                // connection can no longer set ends the wait.
                if let timekeeper, setAlarm(page: page, at: at, on: timekeeper) { continue }
                perform([.release(page: page)])
            case .writeAcknowledgements(let androidID, let persistentIDs):
                acknowledgements?.submit(androidID: androidID, persistentIDs: persistentIDs)
            }
        }
    }

    /// Returns once the page's producer is released (at once if it was already).
    private func released(_ page: UInt64) async {
        await withCheckedContinuation { continuation in
            let waiting = state.withLock { state -> Bool in
                guard state.waiters[page] != nil else { return false }
                state.waiters[page]?.continuation = continuation
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// Sets a page's alarm on its connection's thread; false when the connection cannot.
    private func setAlarm(page: UInt64, at: Duration, on timekeeper: any DeviceMailbox) -> Bool {
        let ring: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            let now = self.clock.uptime()
            self.perform(self.state.withLock { $0.ledger.alarmRang(page: page, now: now) }, timekeeper: timekeeper)
        }
        guard let alarm = timekeeper.schedule(after: max(at - clock.uptime(), .zero), ring) else { return false }
        let stale = state.withLock { state -> Bool in
            guard state.waiters[page] != nil else { return true }
            state.waiters[page]?.alarm = alarm
            return false
        }
        // Released while the alarm was being set.
        if stale { alarm.cancel() }
        return true
    }

    /// Rings a page's alarms from a child task of its producer until the page is released
    /// (the producer then cancels it): sleeps until each alarm, and sleeps again only when
    /// the ledger moved it because news came meanwhile.
    private func ringAlarms(page: UInt64, from first: Duration) async {
        var next: Duration? = first
        while let at = next {
            try? await Task.sleep(for: max(at - clock.uptime(), .zero))
            if Task.isCancelled { return }
            var actions = state.withLock { $0.ledger.alarmRang(page: page, now: clock.uptime()) }
            next = nil
            actions.removeAll { action in
                guard case .setAlarm(_, let at) = action else { return false }
                next = at
                return true
            }
            perform(actions)
        }
    }
}
