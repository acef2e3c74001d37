public import HeraldCore
public import HeraldStorage
import Synchronization

/// Counts the errors each project is answered with, per hour and code, in memory, until
/// they are added to the store's counts (`flush`), which the console's quota page reads.
public final class ErrorLog: Sendable {
    private let pending = Mutex<[ErrorCount: Int]>([:])

    public init() {}

    /// Counts one answer of `error` to a request of `projectID` at `time`.
    public func count(_ error: HeraldError, projectID: String, at time: Timestamp) {
        let key = ErrorCount(
            projectID: projectID, hour: ErrorCount.hour(of: time),
            code: error.fcmCode?.rawValue ?? error.canonicalStatus.name,
            status: error.canonicalStatus.httpStatus, count: 0)
        pending.withLock { $0[key, default: 0] += 1 }
    }

    /// Adds what was counted to the store's counts; kept for the next flush if that fails.
    public func flush(to store: any StatsStore) async throws {
        let taken = pending.withLock { pending in
            defer { pending = [:] }
            return pending.map { key, count in
                var total = key
                total.count = count
                return total
            }
        }
        do {
            try await store.recordErrors(taken)
        } catch {
            pending.withLock { pending in
                for count in taken {
                    var key = count
                    key.count = 0
                    pending[key, default: 0] += count.count
                }
            }
            throw error
        }
    }
}
