import HeraldCore
import HeraldDelivery
import NIOCore

/// How the dispatcher and the fanout engine reach one session, from any thread: each event
/// is posted to the connection's event loop through its inbox.
struct SessionMailbox: DeviceMailbox {
    let connectionID: UInt64
    let inbox: SessionInbox
    /// Whether the device dozes, as the session last said (read without a hop).
    let dozing: SessionFlag
    let eventLoop: any EventLoop

    func wake() { inbox.post(.wake) }

    func replaced() { inbox.post(.replaced) }

    func deliverNow(_ message: QueuedMessage) -> Bool {
        guard inbox.isOpen, !dozing.isSet || message.isHighPriority else { return false }
        inbox.post(.deliverNow(message))
        return true
    }

    func stored(_ entry: QueuedMessage) { inbox.post(.stored(entry)) }

    func offer(_ entry: QueuedMessage, maximumPending: Int) -> Bool {
        guard inbox.isOpen, !dozing.isSet else { return false }
        inbox.post(.offered(entry, maximumPending: maximumPending))
        return true
    }

    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> (any DeliveryPath.Timer)? {
        // Set right after the offer's post to this loop, so it rarely wakes the loop again;
        // the acknowledgement that cancels it is read on this loop.
        try? eventLoop.scheduleCallback(in: TimeAmount(delay), handler: DeviceGateway.LoopTimer(body: body))
    }
}
