import HeraldCore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

@testable import HeraldStorage

/// Statements run as named prepared statements: each text under a name of its own, and a
/// preparation that failed does not stay failed.
@Suite(.enabled(if: TestPostgres.location != nil)) struct PreparedQueryTests {
    /// A store over `shared`'s database with one connection, so that every statement meets
    /// the same connection while it stays open.
    func oneConnectionStore(sharing shared: PostgresStore) async throws -> (PostgresStore, Task<Void, Never>) {
        let store = PostgresStore(shared.location, nodeID: "node-one", logger: Logger(label: "test"), connections: 1)
        let pool = Task { await store.run() }
        try await store.prepare(timeout: .seconds(15), migrating: false)
        return (store, pool)
    }

    @Test func statementsOfTwoTextsArePreparedOnOneConnectionEachUnderItsOwnName() async throws {
        let (store, pool) = try await oneConnectionStore(sharing: try await TestPostgres.store("node-a"))
        defer { pool.cancel() }
        let prepared = try await store.transaction { connection in
            for number in Int64(1)...7 {
                let sum = try await store.rows("SELECT \(number)::int8 + 1", on: connection, prepared: true)
                #expect(try sum.first?.decode(Int64.self) == number + 1)
                let text = try await store.rows("SELECT 'x' || \("y\(number)")", on: connection, prepared: true)
                #expect(try text.first?.decode(String.self) == "xy\(number)")
            }
            return try await store.rows(
                "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'herald_%' ORDER BY name",
                on: connection
            ).map { try $0.decode((String, String).self) }
        }
        #expect(prepared.count == 2)
        #expect(Set(prepared.map(\.1)) == ["SELECT $1::int8 + 1", "SELECT 'x' || $1"])
        #expect(Set(prepared.map(\.0)).count == 2)
    }

    @Test func aStatementWhoseTableDidNotExistYetRunsOnceItDoes() async throws {
        let (store, pool) = try await oneConnectionStore(sharing: try await TestPostgres.store("node-b"))
        defer { pool.cancel() }
        let query: PostgresQuery = "SELECT count(*) FROM table_made_later WHERE value > \(Int64(0))"
        await #expect(throws: (any Error).self) { try await store.run(query, prepared: true) }
        try await store.run("CREATE TABLE table_made_later (value bigint)")
        try await store.run("INSERT INTO table_made_later VALUES (1), (2)")
        // The one connection kept the failed preparation; it was closed and a new one prepares
        // the statement again.
        let rows = try await store.rows(query, prepared: true)
        #expect(try rows.first?.decode(Int64.self) == 2)
    }
}
