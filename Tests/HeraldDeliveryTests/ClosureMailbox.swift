import HeraldCore
import HeraldDelivery

/// A session's mailbox made of functions, for tests that play the session themselves.
struct ClosureMailbox: DeviceMailbox {
    let connectionID: UInt64
    let onWake: @Sendable () -> Void
    let onReplaced: @Sendable () -> Void
    let onDeliverNow: @Sendable (QueuedMessage) -> Bool
    let onStored: (@Sendable (QueuedMessage) -> Void)?
    let onOffer: @Sendable (QueuedMessage, Int) -> Bool
    let onSchedule: DeliveryPath.Schedule?

    init(
        id: UInt64, wake: @escaping @Sendable () -> Void, replace: @escaping @Sendable () -> Void,
        deliverNow: @escaping @Sendable (QueuedMessage) -> Bool = { _ in false },
        stored: (@Sendable (QueuedMessage) -> Void)? = nil,
        offer: @escaping @Sendable (QueuedMessage, Int) -> Bool = { _, _ in false },
        schedule: DeliveryPath.Schedule? = nil
    ) {
        connectionID = id
        onWake = wake
        onReplaced = replace
        onDeliverNow = deliverNow
        onStored = stored
        onOffer = offer
        onSchedule = schedule
    }

    func wake() { onWake() }

    func replaced() { onReplaced() }

    func deliverNow(_ message: QueuedMessage) -> Bool { onDeliverNow(message) }

    func stored(_ entry: QueuedMessage) {
        if let onStored { onStored(entry) } else { onWake() }
    }

    func offer(_ entry: QueuedMessage, maximumPending: Int) -> Bool { onOffer(entry, maximumPending) }

    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any DeliveryPath.Timer)? {
        onSchedule?(delay, body)
    }
}
