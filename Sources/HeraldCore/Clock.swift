import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A moment, in milliseconds since the Unix epoch.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// A timestamp from whole seconds since the epoch.
    public init(seconds: Int64) {
        self.milliseconds = seconds * 1000
    }

    /// Whole seconds since the epoch, rounded down.
    public var seconds: Int64 { milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// This moment moved by a number of seconds.
    public func adding(seconds: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds + seconds * 1000) }

    /// This moment moved by a number of milliseconds.
    public func adding(milliseconds delta: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds + delta) }

    public var description: String { "\(milliseconds)ms" }
}

/// What tells Herald the time: the system clock in production, a manual one in tests.
public protocol HeraldClock: Sendable {
    /// The current time.
    func now() -> Timestamp

    /// A reading that never goes back, finer than a millisecond, for timing short waits:
    /// only differences between two readings mean anything.
    func uptime() -> Duration
}

extension HeraldClock {
    /// `now()` as a duration, for clocks that only move when told to.
    public func uptime() -> Duration { .milliseconds(now().milliseconds) }
}

/// The system's real-time clock.
public struct SystemClock: HeraldClock {
    public init() {}

    public func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    public func uptime() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
    }
}

/// A clock that moves only when told to, so that days pass in microseconds in tests.
public final class ManualClock: HeraldClock {
    private let current: Mutex<Timestamp>

    public init(_ start: Timestamp = Timestamp(seconds: 1_750_000_000)) {
        current = Mutex(start)
    }

    public func now() -> Timestamp { current.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(seconds: Int64) {
        current.withLock { $0 = $0.adding(seconds: seconds) }
    }

    /// Moves the clock forward by milliseconds.
    public func advance(milliseconds: Int64) {
        current.withLock { $0 = $0.adding(milliseconds: milliseconds) }
    }

    /// Sets the clock.
    public func set(_ timestamp: Timestamp) {
        current.withLock { $0 = timestamp }
    }
}
