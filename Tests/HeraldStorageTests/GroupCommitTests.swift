import Foundation
import GRDB
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldStorage

/// L1: a write is answered only once it is committed, whether it had a transaction of its
/// own or shared one with the writes that came while another was being committed.
///
/// One test at a time: each holds the writer with a write that waits for a signal, and a
/// batch is written on its caller's thread, so two such holds at once would take both of
/// the cooperative threads of a two-core machine.
@Suite(.serialized) struct GroupCommitTests {
    /// A database with one table of unique names, and its group commit.
    func database() throws -> (pool: DatabasePool, commits: GroupCommit) {
        let pool = try DatabasePool(
            path: (createdTemporaryDirectory() as NSString).appendingPathComponent("group.sqlite"))
        try pool.write { db in try db.execute(sql: "CREATE TABLE items (name TEXT PRIMARY KEY)") }
        return (pool, GroupCommit(pool: pool))
    }

    /// Inserts `name` and answers its row id.
    @Sendable static func insert(_ name: String) -> @Sendable (Database) throws -> Int64 {
        { db in
            try db.execute(sql: "INSERT INTO items (name) VALUES (?)", arguments: [name])
            return db.lastInsertedRowID
        }
    }

    /// How many rows are named `name` (all rows without a name), read on another connection.
    static func count(_ pool: DatabasePool, _ name: String? = nil) throws -> Int {
        try pool.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM items WHERE ? IS NULL OR name = ?", arguments: [name, name])
        } ?? 0
    }

    /// Starts a write that holds the writer until `release` is signalled, and waits until
    /// it is being written, so that writes started after it wait for the next batch.
    func holdWriter(_ commits: GroupCommit, until release: DispatchSemaphore) async throws -> Task<Int64, any Error> {
        let started = DispatchSemaphore(value: 0)
        let holder = Task {
            try await commits.write { db in
                started.signal()
                release.wait()
                return try Self.insert("holder")(db)
            }
        }
        while started.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(5)) }
        return holder
    }

    /// Waits until `count` writes wait for a batch.
    func waitUntil(_ commits: GroupCommit, holds count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while commits.waiting < count {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Starts a write behind the held writer and returns once it waits for a batch, so
    /// that the writes of a test queue in the order they are started.
    func queue(
        _ commits: GroupCommit, short: Bool, _ body: @escaping @Sendable (Database) throws -> Int64
    ) async throws -> Task<Int64, any Error> {
        let waiting = commits.waiting
        let write = Task { try await commits.write(short: short, body) }
        try await waitUntil(commits, holds: waiting + 1)
        return write
    }

    /// Both kinds of batch: short writes on the writing caller's thread, others on the
    /// writer's queue.
    @Test(arguments: [false, true]) func L1_writesThatWaitedShareOneTransactionAndEachIsCommittedBeforeItsAnswer(
        short: Bool
    ) async throws {
        let (pool, commits) = try database()
        let release = DispatchSemaphore(value: 0)
        let holder = try await holdWriter(commits, until: release)
        // 100 writes behind it: two transactions (64 and 36) after the held one's, however
        // they were scheduled.
        let writes = (0..<100).map { index in
            Task {
                let id = try await commits.write(short: short, Self.insert("w\(index)"))
                // Answered only once committed: another connection sees the row already.
                #expect(try Self.count(pool, "w\(index)") == 1)
                return id
            }
        }
        try await waitUntil(commits, holds: 100)
        release.signal()
        _ = try await holder.value
        var ids = Set<Int64>()
        for write in writes { ids.insert(try await write.value) }
        #expect(ids.count == 100)
        #expect(commits.batches == 3)
        #expect(try Self.count(pool) == 101)
    }

    /// Both kinds of batch: short writes on the writing caller's thread, others on the
    /// writer's queue.
    @Test(arguments: [false, true]) func L1_aWriteThatFailsInASharedTransactionFailsAloneAndTheOthersAreKept(
        short: Bool
    ) async throws {
        let (pool, commits) = try database()
        let release = DispatchSemaphore(value: 0)
        let holder = try await holdWriter(commits, until: release)
        let before = try await queue(commits, short: short, Self.insert("a"))
        // The same name again: a unique-constraint failure inside the shared transaction.
        let failing = try await queue(commits, short: short) { db in
            _ = try Self.insert("b")(db)
            return try Self.insert("a")(db)
        }
        let after = try await queue(commits, short: short, Self.insert("c"))
        release.signal()
        _ = try await holder.value
        _ = try await before.value
        _ = try await after.value
        await #expect(throws: DatabaseError.self) { try await failing.value }
        #expect(commits.batches == 2)
        // The failing write left nothing, not even its first row; the others are there.
        #expect(try Self.count(pool, "a") == 1 && Self.count(pool, "b") == 0 && Self.count(pool, "c") == 1)
    }

    /// A cancelled caller's write that shares a transaction is still written with the
    /// others: its cancellation interrupts nobody's statements.
    /// Both kinds of batch: short writes on the writing caller's thread, others on the
    /// writer's queue.
    @Test(arguments: [false, true]) func L1_aCancelledCallerCannotInterruptTheWritesItsTransactionShares(short: Bool)
        async throws
    {
        let (pool, commits) = try database()
        let release = DispatchSemaphore(value: 0)
        let holder = try await holdWriter(commits, until: release)
        let cancelled = try await queue(commits, short: short, Self.insert("x"))
        let other = try await queue(commits, short: short, Self.insert("y"))
        cancelled.cancel()
        release.signal()
        _ = try await holder.value
        _ = try await other.value
        _ = try? await cancelled.value
        #expect(try Self.count(pool, "x") == 1 && Self.count(pool, "y") == 1)
    }

    /// L1: a short write alone is written on its caller's thread, with no hand-off to the
    /// writer's queue and back; any other write on the writer's queue.
    @Test func L1_aShortWriteIsWrittenOnItsCallersThreadAndALongOneOnTheWritersQueue() async throws {
        let (_, commits) = try database()
        for short in [true, false] {
            let caller = pthread_self()
            let here = try await commits.write(short: short) { _ in pthread_self() == caller }
            #expect(here == short)
        }
    }

    /// L1: a short write that finds SQLite's write lock held by another connection waits for
    /// it on the writer's queue, not on its caller's thread (one of the few that run tasks),
    /// and is written once the lock is let go.
    @Test func L1_aShortWriteFindingTheWriteLockHeldWaitsOnTheWritersQueue() async throws {
        let path = (createdTemporaryDirectory() as NSString).appendingPathComponent("locked.sqlite")
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let pool = try DatabasePool(path: path, configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE items (name TEXT PRIMARY KEY)") }
        let commits = GroupCommit(pool: pool)
        var unsafe = Configuration()
        unsafe.allowsUnsafeTransactions = true
        let other = try DatabaseQueue(path: path, configuration: unsafe)
        try await other.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) {
            try? other.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
        }
        let caller = pthread_self()
        let here = try await commits.write(short: true) { db in
            _ = try Self.insert("after")(db)
            return pthread_self() == caller
        }
        #expect(!here)
        #expect(try Self.count(pool, "after") == 1)
        // The lock free again, the next short write is written on its caller's thread.
        let next = pthread_self()
        #expect(try await commits.write(short: true) { _ in pthread_self() == next })
    }

    /// L4: a short write alone runs on its caller's thread and is still interrupted by its
    /// task's cancellation (the store reports that as a cancellation).
    @Test(.timeLimit(.minutes(3))) func L4_aShortWriteAloneIsInterruptedByItsTasksCancellation() async throws {
        let (pool, commits) = try database()
        let started = Atomic<Bool>(false)
        let write = Task {
            try await commits.write(short: true) { db in
                _ = try Self.insert("long")(db)
                started.store(true, ordering: .relaxed)
                return try Int64.fetchOne(
                    db,
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000)
                        SELECT count(*) FROM n
                        """)!
            }
        }
        while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(1)) }
        try await Task.sleep(for: .milliseconds(20))
        write.cancel()
        let error = await #expect(throws: DatabaseError.self) { try await write.value }
        #expect(error?.resultCode == .SQLITE_INTERRUPT)
        // Rolled back with its transaction.
        #expect(try Self.count(pool, "long") == 0)
    }
}
