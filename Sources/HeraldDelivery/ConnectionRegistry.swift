import HeraldCore
import Synchronization

/// Which device holds a connection to this node, and the mailbox of its session. One
/// connection per device: a new login replaces the old one, which is told.
final class ConnectionRegistry: Sendable {
    private let mailboxes: Mutex<[UInt64: any DeviceMailbox]> = Mutex([:])

    /// Records the session a device logged in on; the one it replaces, if any, is told.
    func register(androidID: UInt64, _ mailbox: any DeviceMailbox) {
        let previous = mailboxes.withLock { $0.updateValue(mailbox, forKey: androidID) }
        if let previous, previous.connectionID != mailbox.connectionID { previous.replaced() }
    }

    /// Forgets a connection, unless the device has logged in again on another one since.
    func unregister(androidID: UInt64, connectionID: UInt64) {
        mailboxes.withLock { mailboxes in
            if mailboxes[androidID]?.connectionID == connectionID { mailboxes[androidID] = nil }
        }
    }

    /// The mailbox of the session holding a device, if one here does.
    func mailbox(of androidID: UInt64) -> (any DeviceMailbox)? {
        mailboxes.withLock { $0[androidID] }
    }

    /// The mailbox holding each entry's device, under one lock (a fanout page holds thousands).
    func mailboxes(of entries: [QueuedMessage]) -> [(any DeviceMailbox)?] {
        mailboxes.withLock { mailboxes in entries.map { mailboxes[$0.androidID] } }
    }

    /// Every mailbox here.
    func all() -> [any DeviceMailbox] {
        mailboxes.withLock { Array($0.values) }
    }

    /// The devices holding a connection here, in ascending order.
    func devices() -> [UInt64] {
        mailboxes.withLock { Array($0.keys) }.sorted()
    }

    func contains(_ androidID: UInt64) -> Bool {
        mailboxes.withLock { $0[androidID] != nil }
    }

    var count: Int { mailboxes.withLock { $0.count } }
}
