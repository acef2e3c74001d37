import Foundation
import HeraldCore
public import Logging
import NIOSSL
import PostgresNIO
import _ConnectionPoolModule

/// The shared store: one PostgreSQL database that several `herald serve` nodes use at once.
///
/// Every method runs in a transaction of its own on a pooled connection; values are bound
/// parameters only. Messages for one device are serialised by locking the device's row, so
/// a device's queue sequence numbers are committed in the order they were taken and a
/// reader after sequence N never misses a row committed later.
public final class PostgresStore: HeraldStore, Cluster {
    public let nodeID: String
    public var isShared: Bool { true }
    /// Where this node runs (host, process, HTTP address), recorded with its heartbeats.
    public let nodeAddress: String
    /// Where the database is.
    public let location: Location
    /// A pool for each of the location's hosts; statements use the primary's.
    let clients: [PostgresClient]
    let primary: PostgresPrimary
    /// When statements waiting for a connection give up (`leaseTimeout`).
    let leaseDeadlines = LeaseDeadlines()
    /// Appends waiting for the next batch (`appendMessages`).
    let appends = BatchedCalls<QueueAppend, [Enqueued]>(maximumBatch: 256)
    /// Woken by every node's commits that create background work (`PostgresStore+Work`);
    /// nil for a store that does not listen (the command line's).
    public let work: WorkSignals?
    /// What this node's commits created, for the other nodes to hear of.
    let notices = WorkNotices()
    public let calls = StoreCalls()
    let logger: Logger

    /// Why the store could not open or a statement failed, in the database's words.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// A store over the database at `location` for `nodeID`, with at most `connections`
    /// pooled connections; a `listening` one holds one of them to hear of the work other
    /// nodes create (a node's store does). Nothing connects until `run()` runs; `prepare`
    /// then waits for the database. `withStore` does both for as long as its body runs.
    public init(
        _ location: Location, nodeID: String, nodeAddress: String = "", logger: Logger, connections: Int = 20,
        minimumConnections: Int = 1, listening: Bool = false
    ) {
        work = listening ? WorkSignals() : nil
        let tls: PostgresClient.Configuration.TLS =
            location.requireTLS ? .require(.makeClientConfiguration()) : .disable
        clients = location.hosts.map { host in
            var configuration = PostgresClient.Configuration(
                host: host.name, port: host.port, username: location.user, password: location.password,
                database: location.database, tls: tls)
            configuration.options.maximumConnections = connections
            configuration.options.minimumConnections = minimumConnections
            // A host that went away is known within seconds, not at the default's ten.
            configuration.options.connectTimeout = .seconds(3)
            // A host that is down is tried again and again: its failures are not news.
            var background = logger
            background.logLevel = max(logger.logLevel, .warning)
            return PostgresClient(configuration: configuration, backgroundLogger: background)
        }
        primary = PostgresPrimary(hosts: location.hosts)
        self.location = location
        self.nodeID = nodeID
        self.nodeAddress = nodeAddress
        self.logger = logger
    }

    /// Runs the connection pools, and watches which host is the primary, until the calling
    /// task is cancelled; statements wait for it.
    public func run() async {
        await run(probing: isWritable)
    }

    /// `run()`, with `probe` answering whether a host takes writes.
    func run(probing probe: @escaping @Sendable (Int) async -> Bool?) async {
        await withDiscardingTaskGroup { group in
            for client in clients { group.addTask { await client.run() } }
            group.addTask { await self.primary.watch(logger: self.logger, probe: probe) }
            group.addTask { await self.leaseDeadlines.run() }
            if work != nil {
                group.addTask { await self.listenForWork() }
                group.addTask { await self.sendNotices() }
            }
        }
    }

    /// Whether the host at `index` takes writes, as libpq's `target_session_attrs=read-write`
    /// asks: a standby, or a primary pg_auto_failover holds read-only, does not. Nil when it
    /// cannot be asked.
    @Sendable func isWritable(_ index: Int) async -> Bool? {
        let answer = try? await clients[index].withConnection { connection in
            try await connection.query(
                "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'",
                logger: self.logger
            ).collect().first?.decode(Bool.self)
        }
        return answer ?? nil
    }

    /// The primary's index among the hosts, or `StoreError.unavailable` while none is known.
    func primaryIndex() throws -> Int {
        guard let index = primary.index else {
            throw StoreError.unavailable("no writable PostgreSQL primary among \(location.redacted)")
        }
        return index
    }

    /// Waits until the database answers, migrating the schema first (one node at a time)
    /// unless `migrating` is false. Fails after `timeout` when the database cannot be
    /// reached or refuses the login. `run()` must be running.
    public func prepare(timeout: Duration = .seconds(20), migrating: Bool = true) async throws {
        let location = location
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                while true {
                    do {
                        if migrating { try await self.migrate() } else { _ = try await self.rows("SELECT 1") }
                        return
                    } catch StoreError.unavailable {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure(description: "PostgreSQL at \(location.redacted) did not answer in \(timeout)")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Runs `body` with a prepared store whose pool runs beside it, in a child task, and
    /// closes the pool when `body` returns.
    public static func withStore<Result>(
        _ location: Location, nodeID: String, nodeAddress: String = "", logger: Logger, connections: Int = 20,
        timeout: Duration = .seconds(20), migrating: Bool = true, listening: Bool = false,
        _ body: (PostgresStore) async throws -> Result
    ) async throws -> Result {
        let store = PostgresStore(
            location, nodeID: nodeID, nodeAddress: nodeAddress, logger: logger, connections: connections,
            listening: listening)
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            try await store.prepare(timeout: timeout, migrating: migrating)
            return try await body(store)
        }
    }

    /// Creates an empty database `name` (letters, digits and underscores) on the server at
    /// `location`, connecting to its database `location.database` to do so.
    public static func createDatabase(
        _ name: String, at location: Location, logger: Logger, timeout: Duration = .seconds(20)
    ) async throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw StoreError.conflict("database name \(name)")
        }
        try await withStore(
            location, nodeID: "admin", logger: logger, connections: 1, timeout: timeout, migrating: false
        ) { store in
            // Outside a transaction: PostgreSQL creates databases only there.
            _ = try await store.rows(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
    }

    /// Runs `body` in a transaction on one pooled connection, retrying a deadlock or a
    /// serialisation failure; turns constraint failures into `StoreError`s. Once it has
    /// committed, the nodes hear of the work its statements created (`CreatedWork`).
    func transaction<T: Sendable>(caller: String = #function, _ body: (PostgresConnection) async throws -> T)
        async throws -> T
    {
        let created = CreatedWork()
        let result = try await leased(statement: "transaction of \(caller)", retryingConflicts: true) { connection in
            try await CreatedWork.$current.withValue(created) {
                try await self.run("BEGIN", on: connection)
                do {
                    let result = try await body(connection)
                    try await self.run("COMMIT", on: connection)
                    return result
                } catch {
                    try? await self.run("ROLLBACK", on: connection)
                    throw error
                }
            }
        }
        self.created(created.all)
        return result
    }

    /// Runs one statement, which is a transaction of its own; a `prepared` one as a named
    /// prepared statement (`PreparedQuery`), for statements run many times a second.
    func run(_ query: PostgresQuery, prepared: Bool = false) async throws {
        _ = try await rows(query, prepared: prepared)
    }

    func run(_ query: PostgresQuery, on connection: PostgresConnection, prepared: Bool = false) async throws {
        _ = try await rows(query, on: connection, prepared: prepared)
    }

    func rows(_ query: PostgresQuery, prepared: Bool = false) async throws -> [PostgresRow] {
        try await leased(statement: query.sql, retryingConflicts: false) { connection in
            try await self.rows(query, on: connection, prepared: prepared)
        }
    }

    /// The one way statements reach the primary: runs `body` on a connection leased from its
    /// pool under the lease's deadline (`withLeasedConnection`). It runs `body` again when the
    /// pool handed out a connection the server had just ended (nothing of it ran; a moment
    /// first, for the pool to hear of the end and hand out another), and, when
    /// `retryingConflicts`, after a deadlock or a serialisation failure (a transaction rolled
    /// back whole). Any other failure is thrown as callers see it (`failure`).
    private func leased<T: Sendable>(
        statement: String, retryingConflicts: Bool, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        calls.add()
        let index = try primaryIndex()
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await withLeasedConnection(host: index, statement: statement, body)
            } catch let error as PSQLError
                where retryingConflicts && attempt < Self.conflictAttempts
                && ["40P01", "40001"].contains(error.serverInfo?[.sqlState])
            {
                continue
            } catch is ConnectionLost where attempt < Self.connectionLostAttempts {
                try await Task.sleep(for: Self.connectionLostPause * (attempt * attempt))
            } catch {
                throw failure(error, on: index)
            }
        }
    }

    /// Runs a statement on a connection that is still open: PostgreSQL's client never
    /// answers a statement written to a connection that has closed (the server ended it, as
    /// a primary going away does), and its caller would wait forever.
    func rows(_ query: PostgresQuery, on connection: PostgresConnection, prepared: Bool = false) async throws
        -> [PostgresRow]
    {
        guard !connection.isClosed else { throw ConnectionLost() }
        guard prepared else { return try await connection.query(query, logger: logger).collect() }
        do {
            return try await PreparedQuery.rows(query, on: connection, logger: logger)
        } catch let error as PSQLError {
            // A connection keeps a statement whose preparation failed as failed for good, and
            // a prepared statement whose tables changed shape may fail each run: when the
            // server answered with such a failure, the connection is closed (the server is
            // there, so the close does not wait on it) and the pool opens a new one. Failures
            // of a run's values, constraints or transaction (classes 22, 23, 40) are not about
            // the statement; one without a server's answer is the connection's own, and the
            // pool drops it.
            if let state = error.serverInfo?[.sqlState], !["22", "23", "40"].contains(state.prefix(2)) {
                try? await connection.close()
            }
            throw error
        }
    }

    /// Why a statement was not written: its connection had closed, so none of it ran.
    struct ConnectionLost: Error {}

    /// How long a statement that met a closed connection waits before it tries again, times
    /// its attempt squared (20, 80, 180, 320 ms): the pool hears of a closed connection from
    /// its own task, which a busy process may run late.
    static let connectionLostPause: Duration = .milliseconds(20)
    /// How many times a statement meets a closed connection before it fails as unavailable.
    static let connectionLostAttempts = 5
    /// How many times a transaction is tried that deadlocks or fails to serialise.
    static let conflictAttempts = 5

    func count(_ query: PostgresQuery) async throws -> Int {
        try await rows(query).count
    }

    func count(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> Int {
        try await rows(query, on: connection).count
    }

    static func storeError(_ error: PSQLError) -> any Error {
        let message = error.serverInfo?[.message] ?? "\(error)"
        switch error.serverInfo?[.sqlState] {
        case "23505": return StoreError.conflict(message)
        case "23503": return StoreError.notFound(message)
        // Read-only (a standby), shutting down, starting, or a lost connection.
        case let state? where state == "25006" || state.hasPrefix("57P") || state.hasPrefix("08"):
            return StoreError.unavailable("PostgreSQL error \(state): \(message)")
        case let state?: return Failure(description: "PostgreSQL error \(state): \(message)")
        default:
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
                return StoreError.unavailable("PostgreSQL connection lost (\(error.code))")
            default: return error
            }
        }
    }

    /// `error` as callers see it (other errors pass unchanged); one that a lost or demoted
    /// primary causes makes the host at `index` suspect, so that the next statement waits
    /// for the primary to be found.
    func failure(_ error: any Error, on index: Int) -> any Error {
        let failure: any Error
        if let error = error as? PSQLError {
            failure = Self.storeError(error)
        } else if error is ConnectionPoolError || error is LeaseTimedOut {
            failure = StoreError.unavailable("PostgreSQL at \(location.hosts[index]) cannot be reached")
        } else if error is ConnectionLost {
            failure = StoreError.unavailable("the connection to PostgreSQL at \(location.hosts[index]) was lost")
        } else {
            failure = error
        }
        if case StoreError.unavailable = failure { primary.suspect(index) }
        return failure
    }
}

extension PostgresBindings {
    /// Binds `value` and answers its placeholder, for statements put together from parts.
    mutating func place<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        append(value)
        return "$\(count)"
    }
}
