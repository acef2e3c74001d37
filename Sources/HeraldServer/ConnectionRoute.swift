import HeraldGateway
import NIOCore

/// Where a connection goes, decided once by its first bytes (a TLS client hello's server
/// name, a first request head) before any protocol handler is set up: for the listeners
/// that serve more than one protocol on a port. A connection that closes before it is
/// routed fails its route, or the server would wait for it forever when it shuts down;
/// `UnroutedConnectionHandler` closes one that stays silent.
struct ConnectionRoute<Route: Sendable> {
    let channel: any Channel
    private let promise: EventLoopPromise<Route>
    private let routed: NIOLoopBoundBox<Bool>
    /// Closes the connection if it stays silent; removed once it is routed, with its timer.
    private let unrouted: UnroutedConnectionHandler

    /// Known once the first bytes have been read.
    var future: EventLoopFuture<Route> { promise.futureResult }

    init(channel: any Channel) {
        self.channel = channel
        let promise = channel.eventLoop.makePromise(of: Route.self)
        let routed = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
        channel.closeFuture.whenComplete { _ in
            if !routed.value {
                routed.value = true
                promise.fail(ChannelError.ioOnClosedChannel)
            }
        }
        self.promise = promise
        self.routed = routed
        unrouted = UnroutedConnectionHandler(routed: routed)
    }

    /// Routes the connection with what `route` sets up, once; the answer completes when the
    /// reader may hand on the bytes it holds.
    func decide(_ route: () -> EventLoopFuture<Route>) -> EventLoopFuture<Void> {
        guard !routed.value else { return channel.eventLoop.makeSucceededVoidFuture() }
        routed.value = true
        channel.pipeline.syncOperations.removeHandler(unrouted, promise: nil)
        promise.completeWith(route())
        // A connection whose handlers could not be set up is closed rather than left hanging.
        let channel = channel
        future.whenFailure { _ in channel.close(promise: nil) }
        return future.map { _ in }
    }

    /// Puts the handlers every such connection starts with first: the admission bound, the
    /// silence timeout, and the reader of its first bytes.
    func install(reader: some ByteToMessageDecoder, admission: ConnectionAdmission) throws {
        try channel.pipeline.syncOperations.addHandler(admission.makeHandler())
        try channel.pipeline.syncOperations.addHandler(unrouted)
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(reader))
    }
}
