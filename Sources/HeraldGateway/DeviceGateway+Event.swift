import HeraldCore
import HeraldProtocol

extension DeviceGateway {
    /// What a connection's session reacts to.
    enum Event: Sendable {
        case frame(MCSFrame)
        case inboundFailed(String)
        case tick
        case wake
        case replaced
        case deliverNow(QueuedMessage)
        case stored(QueuedMessage)
        case offered(QueuedMessage, maximumPending: Int)
        case shutdown
    }
}
