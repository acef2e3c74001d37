public import HeraldCore
import Synchronization

/// Delivery to the devices connected to this node: which session holds each device
/// (`ConnectionRegistry`), and the "offered while stored" order (`OfferLedger`) by which a
/// connected device gets a message while its row is being written.
///
/// The dispatcher and the fanout engine hand it the entries they are about to write
/// (`store`); the gateway's sessions tell it what they did with an offer and what their
/// devices acknowledged.
public final class DeviceRegistry: Sendable {
    /// Sets a timer that runs `body` after `delay`, unless it is cancelled first.
    public typealias Schedule = @Sendable (_ delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any Timer)?

    /// A timer set by a mailbox's `schedule`.
    public protocol Timer: Sendable {
        /// Takes the timer back; nothing happens if it has fired already.
        func cancel()
    }

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

    private let connections = ConnectionRegistry()
    /// Offers by device and persistent id: a device's acknowledgements touch its own only.
    private let ledger = Mutex(OfferLedger())
    /// Writes acknowledgements that arrived before their rows (the gateway's batcher).
    private let acknowledgementWriter: Mutex<Box<@Sendable (UInt64, [String]) -> Void>?> = Mutex(nil)
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

    /// Tells the session holding a device about entries just stored in its queue (the
    /// `stored` rows of one `Enqueued`, which all belong to one device); false when no
    /// session here holds it, in which case the `elsewhere` handler hears of the device.
    @discardableResult
    public func stored(_ entries: [QueuedMessage]) -> Bool {
        guard let first = entries.first else { return false }
        return announce(entries, to: connections.mailbox(of: first.androidID), elsewhere: elsewhere.withLock { $0 })
    }

    /// `stored(_:)` with the device's mailbox and the `elsewhere` handler already looked up.
    private func announce(_ entries: [QueuedMessage], to mailbox: (any DeviceMailbox)?, elsewhere: ElsewhereHandler?)
        -> Bool
    {
        guard let first = entries.first else { return false }
        guard let mailbox else {
            elsewhere?.handler(first.androidID)
            return false
        }
        for entry in entries { mailbox.stored(entry) }
        return true
    }

    /// Sets who hears of devices that got messages while connected to no session here.
    public func forwardElsewhere(_ handler: @escaping @Sendable (UInt64) -> Void) {
        elsewhere.withLock { $0 = Box(handler) }
    }

    /// Sets who deletes the rows of entries acknowledged before they were written.
    public func writeAcknowledgements(_ handler: @escaping @Sendable (UInt64, [String]) -> Void) {
        acknowledgementWriter.withLock { $0 = Box(handler) }
    }

    // MARK: Offered while stored

    /// Writes queue entries with `write`, offering each to the session of its device while
    /// it runs, then tells the sessions what was stored. Entries that carry a "messages
    /// deleted" count are neither offered nor announced: the session reads them from the queue.
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
        let holdersBefore = connections.mailboxes(of: entries)
        // One entry (a send to one device) is timed on its connection's own thread.
        let settlement = settle.map { _ in
            Settlement(schedule: entries.count == 1 ? holdersBefore[0].map(Self.schedule(of:)) : nil)
        }
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
        let holdersAfter = connections.mailboxes(of: written)
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

    /// A mailbox's timer as a settlement's schedule.
    private static func schedule(of mailbox: any DeviceMailbox) -> Schedule {
        { delay, body in mailbox.schedule(after: delay, body) }
    }

    /// Which offered entries their devices acknowledged and need no row: those without a
    /// collapse key (one with a key may still replace an older row of its device). Their
    /// offers are finished here.
    private func settledOffers(_ entries: [QueuedMessage], offered: [Bool]) -> [Bool] {
        ledger.withLock { ledger in
            entries.indices.map { index in
                guard offered[index], entries[index].collapseKey == nil else { return false }
                return ledger.takeAcknowledged(OfferLedger.Key(entries[index]))
            }
        }
    }

    /// Offers the session holding the entry's device a message while its row is being
    /// written, so that a connected device does not wait for the write; answers whether a
    /// session here was offered it. The write then ends the offer (`storedAfterOffer`, or
    /// `withdraw` if it failed).
    func offerBeforeStoring(_ entry: QueuedMessage, maximumPending: Int) -> Bool {
        guard let mailbox = connections.mailbox(of: entry.androidID) else { return false }
        return offer(entry, to: mailbox, maximumPending: maximumPending, settlement: nil)
    }

    private func offer(
        _ entry: QueuedMessage, to mailbox: any DeviceMailbox, maximumPending: Int, settlement: Settlement?
    ) -> Bool {
        // Recorded before the session can see it, so that its acknowledgement finds it.
        settlement?.add()
        let key = OfferLedger.Key(entry)
        ledger.withLock { $0.offer(key, settlement: settlement) }
        guard mailbox.offer(entry, maximumPending: maximumPending) else {
            ledger.withLock { $0.withdraw(key) }
            settlement?.answer()
            return false
        }
        return true
    }

    /// Called by the session that sent an offered entry, before the device can answer it.
    public func sentBeforeStored(_ entry: QueuedMessage) {
        ledger.withLock { $0.sent(OfferLedger.Key(entry)) }?.sent()
    }

    /// Called by a session that took an offered entry but did not send it (its device
    /// dozes, its window is full, or it has older messages to read first): the entry is
    /// written and announced as any other, and its page waits no longer for it.
    public func declinedBeforeStored(_ entry: QueuedMessage) {
        ledger.withLock { $0.declined(OfferLedger.Key(entry)) }?.answer()
    }

    /// The acknowledged ids whose rows may be deleted now: all but those sent before their
    /// rows were written, whose deletion waits for the write (`storedAfterOffer`).
    public func acknowledgementsToWrite(androidID: UInt64, _ persistentIDs: [String]) -> [String] {
        let (ready, answered) = ledger.withLock { $0.acknowledged(androidID: androidID, persistentIDs) }
        for settlement in answered { settlement.answer() }
        return ready
    }

    /// After the write of an offered entry: the session is told of the rows as `stored`
    /// tells it, except the offered one if the device acknowledged it meanwhile, whose
    /// row is deleted instead.
    func storedAfterOffer(_ offered: QueuedMessage, stored entries: [QueuedMessage]) {
        guard ledger.withLock({ $0.written(OfferLedger.Key(offered)) }) else {
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
        ledger.withLock { $0.withdraw(OfferLedger.Key(offered)) }
    }
}
