import HeraldCore
import Synchronization

/// Projects' credentials for a push service as the store last gave them, read again at most
/// once a second, so that a batch costs no store read and a changed key is seen at once.
final class CredentialCache<Value: Sendable>: Sendable {
    private let entries = Mutex<[String: (readAt: Timestamp, value: Value)]>([:])

    /// The project's credentials, from `read` when those known are older than a second. A
    /// read that fails throws, and is tried again the next time.
    func value(projectID: String, now: Timestamp, read: () async throws -> Value) async throws -> Value {
        if let known = entries.withLock({ entries in
            entries[projectID].flatMap { now.milliseconds - $0.readAt.milliseconds < 1000 ? $0.value : nil }
        }) {
            return known
        }
        let value = try await read()
        entries.withLock { $0[projectID] = (now, value) }
        return value
    }
}
