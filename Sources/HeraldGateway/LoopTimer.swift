import NIOCore

extension DeviceGateway {
    /// A function run by an event loop's timer (`SessionMailbox.schedule`).
    struct LoopTimer: NIOScheduledCallbackHandler, Sendable {
        let body: @Sendable () -> Void

        func handleScheduledCallback(eventLoop: some EventLoop) { body() }
    }
}
