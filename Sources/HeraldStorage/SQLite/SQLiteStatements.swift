import Foundation
import GRDB
import GRDBSQLite
import HeraldCore

/// Statements compiled once per connection and kept. Compiling is a good part of a short
/// statement's cost (GRDB also walks every column the statement reads to learn what it
/// touches), and Herald's statements are few: the SQL of each call is fixed, or one of a
/// few shapes.
extension Database {
    func executeCached(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

extension Row {
    static func fetchAll(
        cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Row] {
        try fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    static func fetchOne(
        cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Row? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

extension DatabaseValueConvertible {
    static func fetchOne(
        cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

/// One row of a statement being stepped, read with SQLite's own column calls. GRDB's `Row`
/// first copies every value of a row into a container of its own; for the pages of
/// registrations and queue rows a fanout reads, that copy cost more than SQLite's search.
/// Valid only until the statement steps again.
struct ColumnReader {
    let handle: SQLiteStatement

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func text(_ column: Int32) -> String {
        // The pointer first, then the length, as SQLite asks.
        guard let start = sqlite3_column_text(handle, column) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column))),
            as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// Whether a text column holds `value`, compared without making a string of it.
    func text(_ column: Int32, equals value: String) -> Bool {
        let start = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return value.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count == count else { return false }
            guard count > 0, let start, let base = bytes.baseAddress else { return count == 0 }
            return memcmp(start, base, count) == 0
        } ?? (text(column) == value)
    }

    /// The bytes of a blob column; nil for NULL.
    func bytes(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        guard let start = sqlite3_column_blob(handle, column) else { return [] }
        return Array(
            UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column))))
    }
}

extension Statement {
    /// Runs this insert with the values `bind` sets through SQLite's own calls, and resets;
    /// answers the new row's id.
    func insert(_ bind: (SQLiteStatement) -> Void) throws -> Int64 {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        bind(handle)
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))),
                sql: sql)
        }
        return sqlite3_last_insert_rowid(sqlite3_db_handle(handle))
    }

    /// Binds `arguments`, steps through every row with `body`, and resets.
    func stepRows(arguments: StatementArguments, _ body: (ColumnReader) throws -> Void) throws {
        try setArguments(arguments)
        let handle = sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW: try body(ColumnReader(handle: handle))
            case SQLITE_DONE: return
            case let code:
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))),
                    sql: sql)
            }
        }
    }
}

extension Database {
    func forEachCached(
        sql: String, arguments: StatementArguments, _ body: (ColumnReader) throws -> Void
    ) throws {
        try cachedStatement(sql: sql).stepRows(arguments: arguments, body)
    }

    func fetchAllCached<T>(
        sql: String, arguments: StatementArguments, _ decode: (ColumnReader) throws -> T
    ) throws -> [T] {
        var values: [T] = []
        try forEachCached(sql: sql, arguments: arguments) { values.append(try decode($0)) }
        return values
    }
}
