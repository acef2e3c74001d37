import Logging
import PostgresNIO

/// A statement run as a named prepared statement: PostgreSQL parses it once per connection,
/// and after a few runs may keep one generic plan for it, where an unnamed statement is
/// parsed, analysed and planned on every run. On the send path that work was about half of
/// PostgreSQL's CPU (RELIABILITY.md, the rate).
///
/// PostgresNIO takes a prepared statement's name and text from its type, and the store puts
/// its statements together at run time. So the text at hand is handed to the one type in a
/// task-local value, which `execute` reads where it is called; `rows(_:on:logger:)` is the
/// only way in, and `PreparedQueryTests` fails if that reading moves. A name stands for one
/// text in this process (`PreparedQueryNames`). PostgreSQL fixes a statement's parameter
/// types when it prepares it, from the first run's values: a prepared text must bind values
/// of the same types on every run, and no nil (whose type is left for PostgreSQL to infer).
struct PreparedQuery: PostgresPreparedStatement {
    typealias Row = PostgresRow

    /// The name and text of the statement being run.
    private struct Text: Sendable {
        var name: String
        var sql: String
    }

    @TaskLocal private static var current = Text(name: "", sql: "")

    static var name: String { current.name }
    static var sql: String { current.sql }

    private let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }

    /// The names given to statement texts in this process.
    private static let names = PreparedQueryNames()

    /// Runs `query` on `connection` as the prepared statement of its text, preparing it on
    /// the connection first when it has not been.
    static func rows(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws
        -> [PostgresRow]
    {
        let text = Text(name: names.name(for: query.sql), sql: query.sql)
        return try await $current.withValue(text) {
            var rows: [PostgresRow] = []
            for try await row in try await connection.execute(PreparedQuery(bindings: query.binds), logger: logger) {
                rows.append(row)
            }
            return rows
        }
    }
}
