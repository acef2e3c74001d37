extension DeviceGateway.SessionHandler {
    /// Where a connection's session stands. A session waiting for the store is never idle,
    /// and a closed one does nothing more, whatever it waited for.
    enum State: Equatable {
        /// Nothing under way, and the queues gave their storage back on the last tick.
        case idle
        /// Taking events and carrying out actions; holds its queues' storage until a tick
        /// finds it idle.
        case active
        /// A store read or write is under way: later events wait until its result is in.
        case awaitingStore
        /// The connection closed.
        case closed
    }
}
