import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Sends one HTTP/1.1 request again and again at a fixed rate over a few keep-alive
/// connections, from one thread of its own with plain sockets, and times each answer.
///
/// A load generator on the machine of the server it measures takes CPU from that server,
/// and on a virtual machine most of it goes to waking up. So this one sleeps in `select`
/// on its own thread rather than hopping between an event loop and tasks, and with a
/// `tick` it wakes only at that pace, sending what came due and reading what came back
/// meanwhile: its answers' times then include up to a tick of waiting, so a tick is for
/// senders that make load, not for those whose latency is measured. Each connection sends
/// its next request when it is due and the previous answer is in (a slow answer delays
/// only its own connection, which then catches up at once).
struct PacedHTTP {
    /// Why the run could not go on.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What one run saw: each answer's status and time, and the CPU the sending thread used.
    struct Run {
        var statuses: [Int] = []
        var latencyNanoseconds: [Int64] = []
        var cpuNanoseconds: Int64 = 0
    }

    var host: String
    var port: Int
    /// The whole request, head and body, sent as it is.
    var request: [UInt8]
    var rate: Double
    var seconds: Double
    var connections: Int
    /// How often the sender wakes, in nanoseconds; 0: at each due time and each answer.
    var tick: Int64 = 0
    /// How long answers still out when the run ends are waited for, in nanoseconds.
    var grace: Int64 = 10_000_000_000

    /// Runs on a thread of its own, so that no task thread waits in `select`.
    func runOnThread() async throws -> Run {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try run() }) }.start()
        }
    }

    /// One keep-alive connection and the answer it reads.
    private final class Connection {
        let socket: Int32
        var buffer: [UInt8] = []
        /// What one read takes in, reused.
        var chunk = [UInt8](repeating: 0, count: 16_384)
        /// When the request waiting for its answer was sent, in monotonic nanoseconds.
        var sentAt: Int64?
        var due: Int64

        init(socket: Int32, due: Int64) {
            self.socket = socket
            self.due = due
        }

        deinit { close(socket) }
    }

    func run() throws -> Run {
        let cpuStart = Self.clock(CLOCK_THREAD_CPUTIME_ID)
        let interval = Int64(1e9 * Double(connections) / rate)
        let start = Self.clock(CLOCK_MONOTONIC)
        let end = start + Int64(seconds * 1e9)
        let open = try (0..<connections).map { index in
            Connection(socket: try connect(), due: start + interval * Int64(index) / Int64(connections))
        }
        var run = Run()
        // Answers still out at the end get the grace more.
        let giveUp = end + grace
        while true {
            let now = Self.clock(CLOCK_MONOTONIC)
            for connection in open where connection.sentAt == nil && connection.due < end && connection.due <= now {
                try send(on: connection, at: now)
                connection.due += interval
            }
            let waiting = open.lazy.filter { $0.sentAt != nil }.count
            let nextDue = open.lazy.filter { $0.sentAt == nil && $0.due < end }.map(\.due).min()
            if waiting == 0 && nextDue == nil { break }
            guard now < giveUp else { throw Failure(description: "\(waiting) answers did not come") }
            var wait = max(0, min(nextDue ?? giveUp, giveUp) - now)
            if tick > 0 {
                // Sleeps to the next tick (or due time, if later), then reads what came back.
                var pause = timespec(tv_sec: 0, tv_nsec: Int(min(999_999_999, nextDue == nil ? tick : max(tick, wait))))
                nanosleep(&pause, nil)
                wait = 0
            }
            try readable(open, within: wait) { try read($0, into: &run) }
        }
        run.cpuNanoseconds = Self.clock(CLOCK_THREAD_CPUTIME_ID) - cpuStart
        return run
    }

    private func connect() throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            close(socket)
            throw Failure(description: "not an IPv4 address: \(host)")
        }
        var noDelay: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0, socket < FD_SETSIZE else {
            close(socket)
            throw Failure(description: "connect to \(host):\(port): errno \(errno)")
        }
        return socket
    }

    private func send(on connection: Connection, at now: Int64) throws {
        let written = request.withUnsafeBytes { write(connection.socket, $0.baseAddress, $0.count) }
        // A request this small goes whole into an idle connection's socket buffer.
        guard written == request.count else { throw Failure(description: "write: errno \(errno)") }
        connection.sentAt = now
    }

    /// Hands `body` each connection waiting for an answer whose socket has bytes to read,
    /// waiting at most `nanoseconds` for one.
    private func readable(
        _ connections: [Connection], within nanoseconds: Int64, _ body: (Connection) throws -> Void
    ) throws {
        var set = fd_set()
        var highest: Int32 = -1
        withUnsafeMutableBytes(of: &set) { bytes in
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            for connection in connections where connection.sentAt != nil {
                bytes[Int(connection.socket) / 8] |= UInt8(1 << (connection.socket % 8))
                highest = max(highest, connection.socket)
            }
        }
        var timeout = timeval(
            tv_sec: Int(nanoseconds / 1_000_000_000), tv_usec: Int(nanoseconds % 1_000_000_000 / 1000))
        let count = select(highest + 1, &set, nil, nil, &timeout)
        guard count >= 0 || errno == EINTR else { throw Failure(description: "select: errno \(errno)") }
        guard count > 0 else { return }
        for connection in connections where connection.sentAt != nil {
            let isSet = withUnsafeBytes(of: &set) {
                $0[Int(connection.socket) / 8] & UInt8(1 << (connection.socket % 8))
            }
            if isSet != 0 { try body(connection) }
        }
    }

    private func read(_ connection: Connection, into run: inout Run) throws {
        let count = connection.chunk.withUnsafeMutableBytes { Glibc.read(connection.socket, $0.baseAddress, $0.count) }
        guard count > 0 else { throw Failure(description: "the server closed a connection") }
        connection.buffer.append(contentsOf: connection.chunk[..<count])
        guard let (status, length) = try Self.answer(in: connection.buffer), let sentAt = connection.sentAt else {
            return
        }
        run.statuses.append(status)
        run.latencyNanoseconds.append(Self.clock(CLOCK_MONOTONIC) - sentAt)
        connection.buffer.removeFirst(length)
        connection.sentAt = nil
    }

    /// The status and length of the whole answer at the start of `bytes`, once all of it is there.
    static func answer(in bytes: [UInt8]) throws -> (status: Int, length: Int)? {
        let (cr, lf): (UInt8, UInt8) = (13, 10)
        guard bytes.count >= 4,
            let headEnd = (0...(bytes.count - 4)).first(where: {
                bytes[$0] == cr && bytes[$0 + 1] == lf && bytes[$0 + 2] == cr && bytes[$0 + 3] == lf
            })
        else { return nil }
        let head = bytes[..<headEnd]
        let lines = head.split(separator: lf).map { $0.last == cr ? $0.dropLast() : $0 }
        // "HTTP/1.x NNN ...": the status is the three digits after the first space.
        guard let statusLine = lines.first, statusLine.starts(with: Array("HTTP/1.".utf8)),
            let space = statusLine.firstIndex(of: UInt8(ascii: " ")),
            let status = Self.number(statusLine[(space + 1)...].prefix(3))
        else { throw Failure(description: "not an HTTP answer") }
        let name = Array("content-length:".utf8)
        let contentLength = lines.dropFirst().lazy.compactMap { line -> Int? in
            guard line.count > name.count,
                zip(line.prefix(name.count), name).allSatisfy({ $0 | 0x20 == $1 })
            else { return nil }
            return Self.number(line.dropFirst(name.count).drop { $0 == UInt8(ascii: " ") })
        }.first
        guard let contentLength else { throw Failure(description: "an answer without Content-Length") }
        let length = headEnd + 4 + contentLength
        return bytes.count >= length ? (status, length) : nil
    }

    /// The decimal number a run of ASCII digits spells; nil for none or anything else.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count < 19 else { return nil }
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    private static func clock(_ id: clockid_t) -> Int64 {
        var time = timespec()
        clock_gettime(id, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
