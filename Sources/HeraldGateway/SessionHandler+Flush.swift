extension DeviceGateway.SessionHandler {
    /// When the frames a session wrote go out. Answers to the frames of one socket read are
    /// flushed together when the read completes; others as soon as the work under way ends.
    enum Flush: Equatable {
        /// Nothing written since the last flush, outside a read.
        case flushed
        /// Frames written outside a read: flushed when the work under way ends.
        case due
        /// Inside a read from the socket: what is written is flushed when it completes.
        case atReadComplete(written: Bool)

        /// A read from the socket begins.
        func reading() -> Flush {
            switch self {
            case .flushed: .atReadComplete(written: false)
            case .due: .atReadComplete(written: true)
            case .atReadComplete: self
            }
        }

        /// A frame was written.
        func written() -> Flush {
            switch self {
            case .flushed, .due: .due
            case .atReadComplete: .atReadComplete(written: true)
            }
        }

        /// The socket read under way completed: what it wrote is due.
        func readCompleted() -> Flush {
            switch self {
            case .flushed, .due: self
            case .atReadComplete(let written): written ? .due : .flushed
            }
        }

        /// Frames were written and not flushed.
        var holdsWrites: Bool { self == .due || self == .atReadComplete(written: true) }
    }
}
