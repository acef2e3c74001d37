import Synchronization

/// The kinds of background work the statements of a transaction in progress create, told to
/// the nodes once it commits (`PostgresStore.transaction`).
final class CreatedWork: Sendable {
    /// The transaction the current task runs in, if any.
    @TaskLocal static var current: CreatedWork?

    private let works = Mutex<Set<WorkSignals.Work>>([])

    var all: Set<WorkSignals.Work> { works.withLock { $0 } }

    /// A statement of the current transaction creates `work`; outside one, nothing is kept.
    static func add(_ work: WorkSignals.Work) {
        current?.works.withLock { _ = $0.insert(work) }
    }
}
