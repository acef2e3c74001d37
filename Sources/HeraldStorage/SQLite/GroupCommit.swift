import GRDB
import GRDBSQLite
import Synchronization

/// Writes that arrive while another is being committed share the next transaction, each in
/// a savepoint of its own: one that fails rolls back alone, and none is answered before the
/// commit that makes it durable. The SQLite writer then pays for one commit a batch instead
/// of one a call, and a write waits behind one batch, not behind a line of transactions.
/// `BatchedCalls` says which caller writes a batch.
final class GroupCommit: Sendable {
    /// At most this many writes share a transaction.
    static let maximumBatch = 64

    private let pool: DatabasePool

    init(pool: DatabasePool) {
        self.pool = pool
    }

    /// One write waiting for its batch.
    private struct Pending: Sendable {
        /// Runs the write's body in the batch's transaction (in a savepoint unless `alone`)
        /// and keeps what it answered; throws what it threw.
        let run: @Sendable (_ db: Database, _ alone: Bool) throws -> Void
        /// Replaces what `run` kept when the transaction as a whole fails.
        let fail: @Sendable (any Error) -> Void
        /// A few rows: it may run on its caller's thread.
        let short: Bool
    }

    private let calls = BatchedCalls<Pending, Void>(maximumBatch: GroupCommit.maximumBatch)
    /// Transactions finished (committed or failed) so far: one that finishes after this is
    /// read is not in the log yet.
    var batches: Int { calls.batches.load(ordering: .relaxed) }

    /// Writes waiting for a batch.
    var waiting: Int { calls.waiting }

    /// Runs `body` in a write transaction, possibly beside other writes, and answers once
    /// that transaction is committed. A `short` write (a few rows, as a send's) lets a batch
    /// of only such writes run on the thread of the caller that writes it.
    func write<T: Sendable>(short: Bool = false, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let pending = Pending(
            run: { db, alone in
                do {
                    var value: T?
                    if alone {
                        value = try body(db)
                    } else {
                        try db.inSavepoint {
                            value = try body(db)
                            return .commit
                        }
                    }
                    outcome.withLock { [value] in $0 = .success(value!) }
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                    throw error
                }
            },
            fail: { error in outcome.withLock { $0 = .failure(error) } }, short: short)
        try await calls.submit(pending) { batch in
            await write(batch)
            // Each write's outcome is its own `outcome`.
            return batch.map { _ in .success(()) }
        }
        return try outcome.withLock { $0 }!.get()
    }

    /// Writes a batch of short writes on this thread: an idle serial queue runs a synchronous
    /// block where it is called, so the batch costs no thread switch to the writer's queue
    /// and back (about a tenth of a topic send's CPU). Only one batch is written at a time,
    /// so the queue is idle. A long write (a sweep, a page of a large fanout) would hold one
    /// of the few cooperative threads meanwhile, and goes to the queue instead; so does a
    /// batch that finds SQLite's write lock held by another connection (answers false, and
    /// nothing is written): waiting for the lock here would hold the thread as long.
    private func writeHere(_ batch: [Pending]) async -> Bool {
        if batch.count == 1 {
            // The caller's write alone, as its task's own: its cancellation interrupts it.
            let running = Mutex<Connection?>(nil)
            do {
                return try await withTaskCancellationHandler {
                    try Task.checkCancellation()
                    return try Self.transactionIfUnlocked(pool) { db in
                        running.withLock { $0 = Connection(handle: db.sqliteConnection) }
                        defer { running.withLock { $0 = nil } }
                        try batch[0].run(db, true)
                    }
                } onCancel: {
                    running.withLock { if let handle = $0?.handle { sqlite3_interrupt(handle) } }
                }
            } catch {
                batch[0].fail(error)
            }
            return true
        }
        // A cancelled caller cannot interrupt the statements of the others' writes.
        do {
            return try Self.transactionIfUnlocked(pool) { db in Self.runShared(batch, db) }
        } catch {
            for pending in batch { pending.fail(error) }
        }
        return true
    }

    /// Writes a batch on the writer's queue.
    private func writeOnQueue(_ batch: [Pending]) async {
        if batch.count == 1 {
            // The caller's write alone, as its task's own: its cancellation interrupts it.
            do {
                try await pool.write { db in try batch[0].run(db, true) }
            } catch {
                batch[0].fail(error)
            }
            return
        }
        let committed: Result<Void, any Error> = await withCheckedContinuation { continuation in
            // On the writer's queue, not as the calling task's: a cancelled caller cannot
            // interrupt the statements of the others' writes.
            pool.asyncWrite(
                { db in Self.runShared(batch, db) },
                completion: { _, result in continuation.resume(returning: result) })
        }
        if case .failure(let error) = committed {
            for pending in batch { pending.fail(error) }
        }
    }

    /// Runs the writes of a shared transaction, each in its savepoint: one that throws is
    /// rolled back to it, and the others stay.
    private static func runShared(_ batch: [Pending], _ db: Database) {
        for pending in batch { try? pending.run(db, false) }
    }

    /// The writer's connection while a write alone runs, for its cancellation to interrupt.
    private struct Connection: @unchecked Sendable {
        var handle: SQLiteConnection?
    }

    /// One transaction on the writer connection, run on the calling thread if SQLite's write
    /// lock is free now: its `BEGIN IMMEDIATE` does not wait for another connection (a
    /// checkpoint, another process) to let go. False when it would have waited, with
    /// nothing done. A connection with a busy callback waits as configured.
    private static func transactionIfUnlocked(_ pool: DatabasePool, _ body: (Database) throws -> Void) throws -> Bool {
        let waitMilliseconds: CInt
        switch pool.configuration.busyMode {
        case .immediateError: waitMilliseconds = 0
        case .timeout(let seconds): waitMilliseconds = CInt(seconds * 1000)
        case .callback:
            try pool.write(body)
            return true
        }
        return try pool.writeWithoutTransaction { db in
            let connection = db.sqliteConnection
            sqlite3_busy_timeout(connection, 0)
            defer { sqlite3_busy_timeout(connection, waitMilliseconds) }
            var began = false
            do {
                try db.inTransaction(.immediate) {
                    began = true
                    sqlite3_busy_timeout(connection, waitMilliseconds)
                    try body(db)
                    return .commit
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && !began {
                return false
            }
            return true
        }
    }

    /// Writes a batch in one transaction; the first of it is the caller's own.
    private func write(_ batch: [Pending]) async {
        if !batch.allSatisfy(\.short) {
            await writeOnQueue(batch)
        } else if await !writeHere(batch) {
            await writeOnQueue(batch)
        }
    }
}
