public import HeraldCore
public import HeraldStorage
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

        public init(
            id: UInt64, wake: @escaping @Sendable () -> Void, replace: @escaping @Sendable () -> Void,
            deliverNow: @escaping @Sendable (QueuedMessage) -> Bool = { _ in false },
            stored: (@Sendable (QueuedMessage) -> Void)? = nil,
            offer: @escaping @Sendable (QueuedMessage, Int) -> Bool = { _, _ in false }
        ) {
            self.id = id
            self.wake = wake
            self.replace = replace
            self.deliverNow = deliverNow
            self.stored = stored ?? { _ in wake() }
            self.offer = offer
        }
    }

    /// Where an entry offered before it was stored stands.
    enum Offer {
        /// Handed to the session, which has not sent it yet.
        case offered
        /// Sent to the device; its row may not be written yet.
        case sent
        /// The device acknowledged it before its row was written: the row is deleted once
        /// it is.
        case acknowledged
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

    /// Writes queue entries with `write`, offering each to the session of its device while
    /// it runs (`offerBeforeStoring`), then tells the sessions what was stored (`stored`,
    /// or `storedAfterOffer` for an offered entry). Entries that carry a "messages deleted"
    /// count are neither offered nor announced: the session reads them from the queue.
    public func store(
        _ entries: [QueuedMessage], maximumPending: Int, with write: @Sendable () async throws -> [Enqueued]
    ) async throws {
        // A fanout page holds thousands of entries: the connections are looked up under one lock.
        let holdersBefore = holders(of: entries)
        let offered = entries.indices.map { index in
            guard entries[index].deletedCount == 0, let holder = holdersBefore[index] else { return false }
            return offer(entries[index], to: holder, maximumPending: maximumPending)
        }
        var enqueued: [Enqueued] = []
        defer {
            // Offers the write did not answer (it failed) are forgotten.
            for index in entries.indices.dropFirst(enqueued.count) where offered[index] { withdraw(entries[index]) }
        }
        enqueued = try await write()
        // Looked up again: a device may have connected here while the rows were written.
        let holdersAfter = holders(of: entries)
        let elsewhere = elsewhere.withLock { $0 }
        for (index, outcome) in zip(entries.indices, enqueued) where entries[index].deletedCount == 0 {
            if offered[index] {
                storedAfterOffer(entries[index], stored: outcome.stored)
            } else {
                // An entry's stored rows are its device's.
                _ = announce(outcome.stored, to: holdersAfter[index], elsewhere: elsewhere)
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
        return offer(entry, to: connection, maximumPending: maximumPending)
    }

    private func offer(_ entry: QueuedMessage, to connection: Connection, maximumPending: Int) -> Bool {
        // Recorded before the session can see it, so that its acknowledgement finds it.
        offers.withLock { $0[OfferKey(entry)] = .offered }
        guard connection.offer(entry, maximumPending) else {
            withdraw(entry)
            return false
        }
        return true
    }

    /// Called by the session that sent an offered entry, before the device can answer it.
    public func sentBeforeStored(_ entry: QueuedMessage) {
        let key = OfferKey(entry)
        offers.withLock { offers in
            if offers[key] == .offered { offers[key] = .sent }
        }
    }

    /// The acknowledged ids whose rows may be deleted now: all but those sent before their
    /// rows were written, whose deletion waits for the write (`storedAfterOffer`).
    public func acknowledgementsToWrite(androidID: UInt64, _ persistentIDs: [String]) -> [String] {
        offers.withLock { offers in
            guard !offers.isEmpty else { return persistentIDs }
            return persistentIDs.filter { id in
                let key = OfferKey(androidID: androidID, persistentID: id)
                guard offers[key] == .sent else { return true }
                offers[key] = .acknowledged
                return false
            }
        }
    }

    /// After the write of an offered entry: the session is told of the rows as `stored`
    /// tells it, except the offered one if the device acknowledged it meanwhile, whose
    /// row is deleted instead.
    func storedAfterOffer(_ offered: QueuedMessage, stored entries: [QueuedMessage]) {
        let state = offers.withLock { $0.removeValue(forKey: OfferKey(offered)) }
        guard state == .acknowledged else {
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
