import Foundation
import HeraldCore
public import Logging
import NIOSSL
import PostgresNIO

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
    let client: PostgresClient
    let logger: Logger

    /// Where the database is, from a `postgres://user:password@host:port/database` URL.
    public struct Location: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var user: String
        public var password: String?
        public var database: String
        /// `sslmode=require` in the URL: connect with TLS and check the server's certificate.
        public var requireTLS: Bool

        /// Parses a `postgres://` or `postgresql://` URL; the password may instead come from
        /// `PGPASSWORD`. Nil when it is not such a URL.
        public init?(url: String) {
            self.init(url: url, environment: ProcessInfo.processInfo.environment)
        }

        init?(url: String, environment: [String: String]) {
            guard let components = URLComponents(string: url),
                components.scheme == "postgres" || components.scheme == "postgresql",
                let host = components.host, !host.isEmpty
            else { return nil }
            self.host = host
            port = components.port ?? 5432
            user = components.user ?? environment["PGUSER"] ?? "postgres"
            password = components.password ?? environment["PGPASSWORD"]
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            database = path.isEmpty ? user : path
            requireTLS = components.queryItems?.contains { $0.name == "sslmode" && $0.value == "require" } ?? false
        }

        /// The URL without its password, for logs.
        public var redacted: String { "postgres://\(user)@\(host):\(port)/\(database)" }
    }

    /// Why the store could not open or a statement failed, in the database's words.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// A store over the database at `location` for `nodeID`, with at most `connections`
    /// pooled connections. Nothing connects until `run()` runs; `prepare` then waits for
    /// the database. `withStore` does both for as long as its body runs.
    public init(
        _ location: Location, nodeID: String, nodeAddress: String = "", logger: Logger, connections: Int = 20,
        minimumConnections: Int = 1
    ) {
        let tls: PostgresClient.Configuration.TLS =
            location.requireTLS ? .require(.makeClientConfiguration()) : .disable
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls)
        configuration.options.maximumConnections = connections
        configuration.options.minimumConnections = minimumConnections
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.location = location
        self.nodeID = nodeID
        self.nodeAddress = nodeAddress
        self.logger = logger
    }

    /// Runs the connection pool until the calling task is cancelled; statements wait for it.
    public func run() async {
        await client.run()
    }

    /// Waits until the database answers, migrating the schema first (one node at a time)
    /// unless `migrating` is false. Fails after `timeout` when the database cannot be
    /// reached or refuses the login. `run()` must be running.
    public func prepare(timeout: Duration = .seconds(20), migrating: Bool = true) async throws {
        let location = location
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                if migrating { try await self.migrate() } else { _ = try await self.rows("SELECT 1") }
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
        timeout: Duration = .seconds(20), migrating: Bool = true, _ body: (PostgresStore) async throws -> Result
    ) async throws -> Result {
        let store = PostgresStore(
            location, nodeID: nodeID, nodeAddress: nodeAddress, logger: logger, connections: connections)
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            try await store.prepare(timeout: timeout, migrating: migrating)
            return try await body(store)
        }
    }

    /// Creates an empty database `name` (letters, digits and underscores) on the server at
    /// `location`, connecting to its database `location.database` to do so.
    public static func createDatabase(_ name: String, at location: Location, logger: Logger) async throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw StoreError.conflict("database name \(name)")
        }
        try await withStore(location, nodeID: "admin", logger: logger, connections: 1, migrating: false) { store in
            // Outside a transaction: PostgreSQL creates databases only there.
            _ = try await store.rows(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
    }

    /// Runs `body` in a transaction on one pooled connection, retrying a deadlock or a
    /// serialisation failure; turns constraint failures into `StoreError`s.
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await client.withConnection { connection in
                    try await connection.query("BEGIN", logger: self.logger)
                    do {
                        let result = try await body(connection)
                        try await connection.query("COMMIT", logger: self.logger)
                        return result
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: self.logger)
                        throw error
                    }
                }
            } catch let error as PSQLError {
                let state = error.serverInfo?[.sqlState]
                if (state == "40P01" || state == "40001") && attempt < 5 { continue }
                throw Self.storeError(error)
            }
        }
    }

    /// Runs one statement, which is a transaction of its own.
    func run(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }

    func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws {
        _ = try await connection.query(query, logger: logger).collect()
    }

    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        do {
            return try await client.query(query, logger: logger).collect()
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    func rows(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [PostgresRow] {
        try await connection.query(query, logger: logger).collect()
    }

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
        case let state?: return Failure(description: "PostgreSQL error \(state): \(message)")
        default: return error
        }
    }
}

extension PostgresBindings {
    /// Binds `value` and answers its placeholder, for statements put together from parts.
    mutating func place<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        append(value)
        return "$\(count)"
    }
}
