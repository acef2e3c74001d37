import Synchronization

/// The kinds of work this node's commits created that other nodes have not been told of yet
/// (`PostgresStore.created`): one `NOTIFY` tells every node of all of them, and while
/// commits keep coming at most one goes out every `spacing`, however many batches commit.
final class WorkNotices: Sendable {
    private let pending = Mutex<Set<WorkSignals.Work>>([])
    private let noted = WakeSignal()
    /// The least time between two notices of a busy node.
    static let spacing: Duration = .milliseconds(20)

    /// Commits created `works`.
    func note(_ works: Set<WorkSignals.Work>) {
        guard !works.isEmpty else { return }
        let wasEmpty = pending.withLock { pending in
            defer { pending.formUnion(works) }
            return pending.isEmpty
        }
        if wasEmpty { noted.wake() }
    }

    /// Sends what was noted with `send` until the task is cancelled; what could not be sent
    /// is lost, and the workers find it at their next fallback look.
    func run(_ send: @Sendable (Set<WorkSignals.Work>) async throws -> Void) async {
        while !Task.isCancelled {
            let mark = noted.mark()
            let works = pending.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            if works.isEmpty {
                await noted.wait(after: mark, upTo: .seconds(60))
                continue
            }
            try? await send(works)
            try? await Task.sleep(for: Self.spacing)
        }
    }
}
