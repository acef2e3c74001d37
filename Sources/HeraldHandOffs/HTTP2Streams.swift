import NIOHTTP2

/// The requests one HTTP/2 connection to another push service (APNs, FCM) has open, by
/// stream, and what their answers hold so far: a pure value the connection's frame handler
/// asks and tells.
struct HTTP2Streams<Waiter> {
    /// An answer being read.
    struct Open {
        var waiter: Waiter
        var status: Int?
        var retryAfter: String?
        var body: [UInt8] = []
    }

    /// A finished answer, or a stream that ended without one.
    enum Outcome {
        case answered(HTTP2Answer)
        case failed
    }

    private var open: [HTTP2StreamID: Open] = [:]
    private var next = HTTP2StreamID(1)
    /// Stream ids are odd and rise; past this the connection must be replaced.
    static var lastUsableID: Int32 { Int32.max - 2 }

    var isEmpty: Bool { open.isEmpty }
    /// Whether the connection has run out of stream ids.
    var isExhausted: Bool { Int32(next) >= Self.lastUsableID }

    /// The stream of a new request.
    mutating func start(_ waiter: Waiter) -> HTTP2StreamID {
        let id = next
        next = next.advanced(by: 2)
        open[id] = Open(waiter: waiter)
        return id
    }

    /// A HEADERS frame on `stream`, with its status and `retry-after`; answers the finished
    /// stream when it ends the stream.
    mutating func headers(_ stream: HTTP2StreamID, status: Int?, retryAfter: String? = nil, endStream: Bool)
        -> (Waiter, Outcome)?
    {
        if let status { open[stream]?.status = status }
        if let retryAfter { open[stream]?.retryAfter = retryAfter }
        return endStream ? finish(stream) : nil
    }

    /// A DATA frame on `stream`; at most `maximumBody` bytes of the body are kept.
    mutating func data(_ stream: HTTP2StreamID, _ bytes: [UInt8], endStream: Bool, maximumBody: Int = 4096)
        -> (Waiter, Outcome)?
    {
        if var entry = open[stream] {
            entry.body += bytes.prefix(max(0, maximumBody - entry.body.count))
            open[stream] = entry
        }
        return endStream ? finish(stream) : nil
    }

    /// A stream that was reset.
    mutating func reset(_ stream: HTTP2StreamID) -> (Waiter, Outcome)? {
        open.removeValue(forKey: stream).map { ($0.waiter, .failed) }
    }

    /// Streams past `lastStreamID` that a GOAWAY says will never be answered, or every
    /// stream when the connection closed.
    mutating func abandon(after lastStreamID: HTTP2StreamID = .rootStream) -> [Waiter] {
        let gone = open.filter { $0.key > lastStreamID }
        for id in gone.keys { open[id] = nil }
        return gone.values.map(\.waiter)
    }

    private mutating func finish(_ stream: HTTP2StreamID) -> (Waiter, Outcome)? {
        guard let entry = open.removeValue(forKey: stream) else { return nil }
        guard let status = entry.status else { return (entry.waiter, .failed) }
        return (entry.waiter, .answered(HTTP2Answer(status: status, retryAfter: entry.retryAfter, body: entry.body)))
    }
}
