public import HeraldCore
import Synchronization

/// Slows sign-ins after failures and lets them run one at a time: each failed attempt for
/// a name, or from an address, makes the next answer for it wait a second longer, up to
/// `longestDelaySeconds`, until a quiet `forgetAfterSeconds` or a success clears it; and
/// while an attempt for a name or from an address is being checked, another for the same
/// is refused unchecked, so a burst of guesses is no faster than a sequence. Kept per
/// node, bounded in size.
public final class SignInThrottle: Sendable {
    struct Record {
        var failures: Int
        var last: Timestamp
    }

    struct State {
        var records: [String: Record] = [:]
        /// The names and addresses with an attempt being checked now.
        var attempting: Set<String> = []
    }

    static let longestDelaySeconds = 10
    static let forgetAfterSeconds: Int64 = 15 * 60
    static let maximumRecords = 10_000
    private let state = Mutex(State())

    public init() {}

    /// Starts an attempt for `name` from `address`: how long to wait before checking it, or
    /// nil when another attempt for the name or from the address is being checked (then
    /// refuse it unchecked). Every attempt started ends with `failed` or `succeeded`.
    public func begin(name: String, address: String, now: Timestamp) -> Int? {
        let keys = [Self.key(name: name), Self.key(address: address)]
        return state.withLock { state in
            guard state.attempting.isDisjoint(with: keys) else { return nil }
            state.attempting.formUnion(keys)
            let failures = keys.map { key in
                guard let record = state.records[key], record.last.adding(seconds: Self.forgetAfterSeconds) > now else {
                    return 0
                }
                return record.failures
            }
            return min(failures.max() ?? 0, Self.longestDelaySeconds)
        }
    }

    /// Ends an attempt that failed, and counts it.
    public func failed(name: String, address: String, now: Timestamp) {
        state.withLock { state in
            if state.records.count >= Self.maximumRecords {
                state.records = state.records.filter { $0.value.last.adding(seconds: Self.forgetAfterSeconds) > now }
                if state.records.count >= Self.maximumRecords { state.records.removeAll() }
            }
            for key in [Self.key(name: name), Self.key(address: address)] {
                let failures = (state.records[key]?.failures ?? 0) + 1
                state.records[key] = Record(failures: failures, last: now)
                state.attempting.remove(key)
            }
        }
    }

    /// Ends an attempt that was not checked (the node had no room to check it), counting nothing.
    public func abandoned(name: String, address: String) {
        state.withLock { state in
            state.attempting.remove(Self.key(name: name))
            state.attempting.remove(Self.key(address: address))
        }
    }

    /// Ends an attempt that signed in, and clears the name's failures.
    public func succeeded(name: String, address: String) {
        state.withLock { state in
            state.records.removeValue(forKey: Self.key(name: name))
            state.attempting.remove(Self.key(name: name))
            state.attempting.remove(Self.key(address: address))
        }
    }

    private static func key(name: String) -> String { "name:" + name.lowercased() }
    private static func key(address: String) -> String { "address:" + address }
}
