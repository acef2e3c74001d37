import GRDB
import Synchronization

/// Watches the embedded store's writer for writes that create background work, and wakes
/// its workers once the transaction that made them commits (`WorkSignals`), never before:
/// a worker woken earlier would look and find nothing.
///
/// Scheduled sends, webhooks and credentials are seen as their rows change. Events and queue
/// entries are written by statements the store steps itself (`SQLiteStatement.insert`),
/// which GRDB does not see run: their writers `note` them. A webhook's claims and progress
/// do not wake anyone; its creation or a change of its state does, as new events do.
final class WorkObserver: TransactionObserver, Sendable {
    let signals: WorkSignals
    /// What the transaction in progress created (touched on the writer's connection only).
    private let created = Mutex<Set<WorkSignals.Work>>([])

    init(signals: WorkSignals) {
        self.signals = signals
    }

    private static func work(_ table: String, _ kind: DatabaseEvent.Kind) -> WorkSignals.Work? {
        switch (table, kind) {
        case ("webhooks", .insert), ("webhooks", .update): .events
        case ("scheduled_sends", .insert): .scheduled
        case ("counters", .update): .credentials
        default: nil
        }
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        switch eventKind {
        case .update(let table, let columns) where table == "webhooks": columns.contains("state")
        case .insert(let table), .update(let table, _), .delete(let table):
            Self.work(table, .insert) != nil || Self.work(table, .update) != nil
        }
    }

    /// The transaction in progress on the writer's connection created `work`.
    func note(_ work: WorkSignals.Work) {
        created.withLock { _ = $0.insert(work) }
    }

    func databaseDidChange(with event: DatabaseEvent) {
        if let work = Self.work(event.tableName, event.kind) { note(work) }
    }

    func databaseDidCommit(_ db: Database) {
        let works = created.withLock { created in
            defer { created.removeAll(keepingCapacity: true) }
            return created
        }
        signals.wake(works)
    }

    func databaseDidRollback(_ db: Database) {
        created.withLock { $0.removeAll(keepingCapacity: true) }
    }
}
