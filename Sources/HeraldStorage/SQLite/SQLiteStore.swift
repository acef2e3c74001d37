import Foundation
import GRDB
import GRDBSQLite
import HeraldCore
import Synchronization

/// The embedded store: one SQLite database in WAL mode, written through GRDB.
///
/// A transaction that returned is in the write-ahead log, so it survives the process
/// being killed (`synchronous=NORMAL`; a power loss may lose the last moments).
public final class SQLiteStore: HeraldStore {
    let pool: DatabasePool
    /// Every write goes through it: writes that come together share a transaction.
    let commits: GroupCommit
    /// Woken by this process's commits that create background work (`WorkObserver`), and
    /// for credentials by the write-ahead log changing (`lookForOtherWriters`).
    public var work: WorkSignals? { workObserver.signals }
    /// Wakes `work` as the writer commits; noted to by the writers it does not see.
    let workObserver = WorkObserver(signals: WorkSignals())
    /// The write-ahead log's size and time of change at the last look.
    let logFileSeen = Mutex<[Double]?>(nil)
    public let calls = StoreCalls()
    /// A connection of its own for moving the write-ahead log into the database file
    /// (`checkpoint()`), so that a writer does not pay for it inside a transaction.
    let checkpointer: DatabaseQueue
    /// The last shared stanza the expiry sweep looked at (`deleteExpired`).
    let stanzaSweepPosition = Mutex<Int64>(0)
    /// Registrations looked up by token. Only this store changes registration rows; the
    /// command line, from another process, may delete a project, which bumps the
    /// credentials revision the server polls: seeing it move empties the cache.
    let registrations = RegistrationCache(capacity: 32_768)
    let lastCredentialsRevision = Mutex<Int64?>(nil)
    /// `commits.batches` as it was before the last checkpoint that copied the whole log.
    let checkpointedThrough = Mutex<Int?>(nil)
    /// The node the events it writes name.
    let nodeID: String

    /// How many log pages a writer lets accumulate before it checkpoints itself: only
    /// reached when nothing calls `checkpoint()` often enough.
    static let automaticCheckpointPages = 16_384

    /// Opens (creating and migrating if needed) the database at `path`; the events it
    /// writes name the node `nodeID`.
    public init(path: String, nodeID: String = "node-1") throws {
        self.nodeID = nodeID
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.automaticCheckpointPages)")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        commits = GroupCommit(pool: pool)
        try pool.write { db in try Self.release(db).check() }
        try Self.migrator.migrate(pool)
        try pool.write { db in try Self.mark(Self.release(db).opened(), db) }
        pool.add(transactionObserver: workObserver, extent: .databaseLifetime)
        var checkpointing = Configuration()
        checkpointing.busyMode = .timeout(10)
        checkpointer = try DatabaseQueue(path: path, configuration: checkpointing)
    }

    /// Copies committed log pages into the database file without waiting for readers or
    /// the writer (a passive checkpoint). Answers whether it ran: it does not when nothing
    /// was written since one that copied the whole log, so an idle server does not take
    /// the database's locks several times a second for nothing.
    @discardableResult
    public func checkpoint() async throws -> Bool {
        let finished = commits.batches
        if checkpointedThrough.withLock({ $0 }) == finished { return false }
        calls.add()
        let row = try await checkpointer.writeWithoutTransaction { db in
            try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
        }
        // The answer is (busy, frames in the log, frames copied): a reader's snapshot can
        // hold frames back, and those are tried again next time.
        let copiedAll = row.map { (row: Row) -> Bool in
            let frames: Int = row[1]
            let copied: Int = row[2]
            return frames == copied
        }
        checkpointedThrough.withLock { $0 = copiedAll == true ? finished : nil }
        return true
    }

    /// Wakes the credential refresher when the write-ahead log changed since the last look:
    /// the command line, in another process, may have changed credentials, and this
    /// process's commits would not tell. A look at the file's status, not at the database.
    public func lookForOtherWriters() {
        let attributes = try? FileManager.default.attributesOfItem(atPath: pool.path + "-wal")
        let now = [
            (attributes?[.size] as? NSNumber)?.doubleValue ?? 0,
            (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0,
        ]
        let changed = logFileSeen.withLock { seen in
            defer { seen = now }
            return seen != nil && seen != now
        }
        if changed { work?.wake([.credentials]) }
    }

    /// Opens the store kept in a data directory, creating the directory if needed; the
    /// directory and its files are readable by their owner alone (`PrivateDirectory`).
    public convenience init(dataDirectory: String, nodeID: String = "node-1") throws {
        try PrivateDirectory.prepare(dataDirectory)
        try self.init(path: (dataDirectory as NSString).appendingPathComponent("herald.sqlite"), nodeID: nodeID)
        // The database made its log and shared-memory files while opening.
        try PrivateDirectory.restrict(dataDirectory)
    }

    // MARK: Helpers

    /// Runs a read transaction on the calling thread. GRDB's asynchronous read hops to a
    /// reader's dispatch queue and back, two thread switches that cost more CPU than the
    /// look-ups most reads are; a synchronous read on an idle reader runs where it is called.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        calls.add()
        return try pool.read(body)
    }

    /// Whether a write of this many rows is short enough to run on its caller's thread
    /// (`GroupCommit`): a send's, not a sweep's or a large fanout page's.
    static func isShort(_ rows: Int) -> Bool { rows <= 16 }

    /// Runs a write transaction, turning constraint failures into `StoreError.conflict`,
    /// a missing parent row into `StoreError.notFound` and an interrupt into a cancellation.
    func write<T: Sendable>(
        short: Bool = false, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        calls.add()
        do {
            return try await commits.write(short: short, body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            // GRDB interrupts the statement of a cancelled task: to callers that is a
            // cancellation, after which they may still write what they held (nothing was).
            throw CancellationError()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            if error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
                throw StoreError.notFound(error.message ?? "referenced row")
            }
            throw StoreError.conflict(error.message ?? "unique value taken")
        }
    }

}
