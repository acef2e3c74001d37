import PostgresNIO

/// Background work across nodes (`WorkSignals`): what a node's commits create goes to every
/// node as a `NOTIFY` on one channel, and each node wakes its workers for what it hears.
/// Sends, scheduled sends, webhooks and credentials changed by any writer (the command line
/// included) notify from triggers, in their own transaction; the writes of sends do not, as a
/// transaction that notifies holds a database-wide lock until it has committed: this node
/// notes them after their commit (`created`) and one coalesced notice tells of them.
extension PostgresStore {
    static let workChannel = "herald_work"

    /// Tells every node, this one included, that commits of this node created `works`.
    func created(_ works: Set<WorkSignals.Work>) {
        notices.note(works)
    }

    /// Sends the noted notices until the task is cancelled.
    func sendNotices() async {
        await notices.run { works in
            var binds = PostgresBindings()
            let calls = works.map { "pg_notify('\(Self.workChannel)', \(binds.place($0.rawValue)))" }
            try await self.run(PostgresQuery(unsafeSQL: "SELECT \(calls.joined(separator: ", "))", binds: binds))
        }
    }

    /// Listens on the primary and wakes this node's workers for every notice, until the task
    /// is cancelled; each time it starts listening it wakes them all, for what it missed.
    func listenForWork() async {
        guard let work else { return }
        while !Task.isCancelled {
            do {
                let index = try primaryIndex()
                try await withLeasedConnection(host: index, statement: nil) { connection in
                    try await connection.listen(on: Self.workChannel) { notices in
                        work.wakeAll()
                        for try await notice in notices {
                            if let kind = WorkSignals.Work(rawValue: notice.payload) { work.wake([kind]) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
