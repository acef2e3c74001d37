public import HeraldCore

/// How the path reaches the session that holds a device, from any thread: one typed
/// mailbox per session. The gateway's posts each event to its connection's event loop.
public protocol DeviceMailbox: Sendable {
    /// Unique per connection on this node.
    var connectionID: UInt64 { get }

    /// Asks the session to read the device's queue.
    func wake()

    /// Tells the session another connection took over its device.
    func replaced()

    /// Hands a message for delivery now, without storing it (SEMANTICS D6); false when the
    /// device cannot take it at once (it dozes and the message is not high priority).
    func deliverNow(_ message: QueuedMessage) -> Bool

    /// Tells the session an entry was stored in the device's queue, with its sequence, so
    /// that it can send it without reading the queue back.
    func stored(_ entry: QueuedMessage)

    /// Offers an entry that is being stored, with the project's pending limit (SEMANTICS
    /// D1): the session sends it at once if the entry cannot change what its queue holds,
    /// and tells the path whether it did. False when the connection is gone or the
    /// device dozes.
    func offer(_ entry: QueuedMessage, maximumPending: Int) -> Bool

    /// Runs `body` after `delay` on the thread that reads the device's answers, so that a
    /// wait for this device's answer is timed there and the answer takes the timer back
    /// without waking another thread; nil when the connection cannot.
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any DeliveryPath.Timer)?
}

extension DeviceMailbox {
    public func deliverNow(_ message: QueuedMessage) -> Bool { false }

    public func stored(_ entry: QueuedMessage) { wake() }

    public func offer(_ entry: QueuedMessage, maximumPending: Int) -> Bool { false }

    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any DeliveryPath.Timer)? {
        nil
    }
}
