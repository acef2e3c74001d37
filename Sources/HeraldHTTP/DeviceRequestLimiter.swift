public import HeraldCore
import Synchronization

/// Bounds what the unauthenticated device endpoints (check-in, `register3`, installations,
/// web registrations) let one source address, and one checked-in device, do over time, and
/// the APNs tokens a project imports (SEMANTICS A1): a
/// token bucket per key that holds a minute's allowance and refills evenly. Past it a
/// request is answered 429 with `Retry-After`, in its endpoint's error shape.
public final class DeviceRequestLimiter: Sendable {
    /// The allowances, each per minute; 0 lifts that limit.
    public struct Limits: Sendable, Equatable {
        /// New devices checked in from one address. Default 120.
        public var checkinsPerAddress: Int = 120
        /// Registrations (`register3`, installations, web registrations) from one address. Default 600.
        public var registrationsPerAddress: Int = 600
        /// `register3` requests of one checked-in device. Default 60.
        public var registrationsPerDevice: Int = 60
        /// Check-ins of one device that presents its id and security token. Default 10.
        public var recheckinsPerDevice: Int = 10
        /// APNs tokens one project may import (`batchImport`) a minute. Default 6,000: a
        /// million tokens move over in under three hours, and a leaked server key cannot
        /// fill the store in seconds.
        public var importsPerProject: Int = 6_000

        public init() {}

        /// No limit at all (benchmarks that check in thousands of devices from one address).
        public static let unlimited: Limits = {
            var limits = Limits()
            limits.checkinsPerAddress = 0
            limits.registrationsPerAddress = 0
            limits.registrationsPerDevice = 0
            limits.recheckinsPerDevice = 0
            limits.importsPerProject = 0
            return limits
        }()
    }

    /// What is being counted.
    public enum Kind: String, Sendable {
        case checkin, registration, deviceRegistration, recheckin, projectImport
    }

    public let limits: Limits
    private let clock: any HeraldClock
    private let buckets: Mutex<[String: TokenBucket]> = Mutex([:])
    /// Buckets kept before full ones are forgotten.
    static let pruneAt = 100_000

    public init(limits: Limits, clock: any HeraldClock) {
        self.limits = limits
        self.clock = clock
    }

    /// Takes one request of `kind` for `key` (an address or a device id); false when its
    /// allowance is spent.
    public func admit(_ kind: Kind, _ key: String) -> Bool {
        let perMinute =
            switch kind {
            case .checkin: limits.checkinsPerAddress
            case .registration: limits.registrationsPerAddress
            case .deviceRegistration: limits.registrationsPerDevice
            case .recheckin: limits.recheckinsPerDevice
            case .projectImport: limits.importsPerProject
            }
        guard perMinute > 0 else { return true }
        let now = clock.now()
        let refill = max(1, 60_000 / Int64(perMinute))
        return buckets.withLock { buckets in
            if buckets.count >= Self.pruneAt {
                buckets = buckets.filter { _, bucket in
                    var bucket = bucket
                    return !bucket.isFull(capacity: perMinute, refillMilliseconds: refill, now: now)
                }
                // A flood from that many keys at once: start again rather than filter on every request.
                if buckets.count >= Self.pruneAt / 2 { buckets.removeAll(keepingCapacity: true) }
            }
            let name = kind.rawValue + " " + key
            var bucket = buckets[name] ?? TokenBucket(capacity: perMinute, now: now)
            let taken = bucket.take(capacity: perMinute, refillMilliseconds: refill, now: now)
            buckets[name] = bucket
            return taken
        }
    }
}
