public import HeraldDelivery
public import NIOCore

/// An event loop's timer is what a connection's `schedule` answers: it has `cancel()` already.
extension NIOScheduledCallback: DeliveryPath.Timer {}
