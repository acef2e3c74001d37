public import HeraldCore
import Synchronization

/// Slows sign-ins after failures: each failed attempt for a name, or from an address,
/// makes the next answer for it wait a second longer, up to `longestDelaySeconds`, until a
/// quiet `forgetAfterSeconds` or a success clears it. Kept per node, bounded in size.
public final class SignInThrottle: Sendable {
    struct Record {
        var failures: Int
        var last: Timestamp
    }

    static let longestDelaySeconds = 10
    static let forgetAfterSeconds: Int64 = 15 * 60
    static let maximumRecords = 10_000
    private let records = Mutex<[String: Record]>([:])

    public init() {}

    /// How long to wait before answering an attempt for `name` from `address`.
    public func delaySeconds(name: String, address: String, now: Timestamp) -> Int {
        records.withLock { records in
            let failures = [Self.key(name: name), Self.key(address: address)].map { key in
                guard let record = records[key], record.last.adding(seconds: Self.forgetAfterSeconds) > now else {
                    return 0
                }
                return record.failures
            }
            return min(failures.max() ?? 0, Self.longestDelaySeconds)
        }
    }

    /// Counts a failed attempt.
    public func failed(name: String, address: String, now: Timestamp) {
        records.withLock { records in
            if records.count >= Self.maximumRecords {
                records = records.filter { $0.value.last.adding(seconds: Self.forgetAfterSeconds) > now }
                if records.count >= Self.maximumRecords { records.removeAll() }
            }
            for key in [Self.key(name: name), Self.key(address: address)] {
                let failures = (records[key]?.failures ?? 0) + 1
                records[key] = Record(failures: failures, last: now)
            }
        }
    }

    /// Clears a name's failures after it signed in.
    public func succeeded(name: String) {
        _ = records.withLock { $0.removeValue(forKey: Self.key(name: name)) }
    }

    private static func key(name: String) -> String { "name:" + name.lowercased() }
    private static func key(address: String) -> String { "address:" + address }
}
