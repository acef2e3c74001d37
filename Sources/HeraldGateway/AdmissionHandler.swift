import NIOCore

/// The first handler of an accepted connection: asks `ConnectionAdmission` for a place when
/// the connection opens, closing it at once without one; when the connection authenticates
/// (`ConnectionAdmission.Authenticated`, sent down the pipeline) trades it for an
/// authenticated one, closing the connection without one; gives its place back when it
/// closes.
final class AdmissionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    private let admission: ConnectionAdmission
    /// The source address while the connection holds a place not yet authenticated.
    private var counted: String?
    /// The source address while the connection holds an authenticated place.
    private var authenticated: String?

    init(admission: ConnectionAdmission) {
        self.admission = admission
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Added to a connection already open (a pipeline made after the accept).
        if context.channel.isActive { _ = take(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if counted != nil || take(context: context) { context.fireChannelActive() }
    }

    /// Takes a place for the connection, or closes it; whether it has one.
    private func take(context: ChannelHandlerContext) -> Bool {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        if let refusal = admission.admit(address) {
            admission.onRefusal(refusal)
            context.close(promise: nil)
            return false
        }
        counted = address
        return true
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is ConnectionAdmission.Authenticated else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed()
        guard let address = counted else { return }
        counted = nil
        if let refusal = admission.authenticated(address) {
            admission.onRefusal(refusal)
            context.close(promise: nil)
        } else {
            authenticated = address
        }
    }

    private func release() {
        if let address = counted {
            counted = nil
            admission.release(address)
        }
        if let address = authenticated {
            authenticated = nil
            admission.releaseAuthenticated(address)
        }
    }
}
