import HeraldCore

/// Entries on their way through `DeliveryPath.deliver`: offered to the sessions of their
/// devices, then written by their producer. `settle` moves the entries their devices acknowledged
/// meanwhile from `toWrite` to `acknowledged`.
struct Offers: Sendable {
    /// The entries the producer writes.
    var toWrite: [QueuedMessage]
    /// Entries acknowledged while the producer waited: they get no row and count as
    /// delivered (SEMANTICS L7).
    var acknowledged: [QueuedMessage] = []
    /// Whether each of `toWrite` was offered to a session here.
    var offered: [Bool]
    /// The ledger's page the producer waits on, until `settle`.
    var page: UInt64?
    /// The connection whose thread times the wait for one device.
    var timekeeper: (any DeviceMailbox)?

    init(_ entries: [QueuedMessage]) {
        toWrite = entries
        offered = Array(repeating: false, count: entries.count)
    }
}
