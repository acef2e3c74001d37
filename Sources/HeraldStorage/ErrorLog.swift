public import HeraldCore
import Synchronization

/// Counts the errors each project is answered with, per hour and code, in memory, until
/// they are added to the store's counts (`flush`), which the console's quota page reads; a
/// send refused for a quota of SEMANTICS T1, T3 or T6 is also kept as a `refused` event (E1),
/// at most `maximumRefusals` between two flushes (the counts count every one).
public final class ErrorLog: Sendable {
    private let pending = Mutex<[ErrorCount: Int]>([:])
    private let refusals = Mutex<[MessageEvent]>([])

    /// Refused events kept between two flushes: an overloaded project's refusals cannot
    /// grow without end while they wait, nor fill the store.
    public static let maximumRefusals = 1_000

    public init() {}

    /// Counts one answer of `error` to a request of `projectID` at `time`.
    public func count(_ error: HeraldError, projectID: String, at time: Timestamp) {
        let key = ErrorCount(
            projectID: projectID, hour: ErrorCount.hour(of: time),
            code: error.fcmCode?.rawValue ?? error.canonicalStatus.name,
            status: error.canonicalStatus.httpStatus, count: 0)
        pending.withLock { $0[key, default: 0] += 1 }
        guard let rule = error.quotaSubject.flatMap(MessageEventType.rule(ofQuota:)) else { return }
        refusals.withLock { refusals in
            guard refusals.count < Self.maximumRefusals else { return }
            refusals.append(
                MessageEvent(
                    type: .refused, reason: rule, projectID: projectID, messageID: "", at: time))
        }
    }

    /// What was counted since the last flush.
    var counted: [ErrorCount] {
        pending.withLock { pending in
            pending.map { key, count in
                var total = key
                total.count = count
                return total
            }
        }
    }

    /// Adds what was counted to the store's counts and keeps the refused events; what was
    /// not stored is kept for the next flush.
    public func flush(to store: any StatsStore & EventStore) async throws {
        let refused = refusals.withLock { refusals in
            defer { refusals = [] }
            return refusals
        }
        do {
            try await store.recordEvents(refused)
        } catch StoreError.notFound {
            // A project was deleted since: the batch is dropped rather than tried for ever.
        } catch {
            refusals.withLock { $0 = Array((refused + $0).prefix(Self.maximumRefusals)) }
            throw error
        }
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
