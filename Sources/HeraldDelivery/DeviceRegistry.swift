public import HeraldCore
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

        public init(
            id: UInt64, wake: @escaping @Sendable () -> Void, replace: @escaping @Sendable () -> Void,
            deliverNow: @escaping @Sendable (QueuedMessage) -> Bool = { _ in false },
            stored: (@Sendable (QueuedMessage) -> Void)? = nil
        ) {
            self.id = id
            self.wake = wake
            self.replace = replace
            self.deliverNow = deliverNow
            self.stored = stored ?? { _ in wake() }
        }
    }

    private let connections: Mutex<[UInt64: Connection]> = Mutex([:])
    /// Told about devices that got messages but hold no connection here, when several
    /// nodes share the store (another node may hold them).
    private let elsewhere: Mutex<Forwarder?> = Mutex(nil)

    /// The `elsewhere` handler in a box: a function kept directly in a `Mutex` is wrapped in
    /// one more conversion thunk by every `withLock` that reads it, so calls grow slower
    /// without end.
    private final class Forwarder: Sendable {
        let forward: @Sendable (UInt64) -> Void

        init(_ forward: @escaping @Sendable (UInt64) -> Void) {
            self.forward = forward
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
        guard let connection = connections.withLock({ $0[first.androidID] }) else {
            elsewhere.withLock { $0 }?.forward(first.androidID)
            return false
        }
        for entry in entries { connection.stored(entry) }
        return true
    }

    /// Sets who hears of devices that got messages while connected to no session here.
    public func forwardElsewhere(_ handler: @escaping @Sendable (UInt64) -> Void) {
        elsewhere.withLock { $0 = Forwarder(handler) }
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
