import GRDB
import HeraldCore

extension SQLiteStore {
    /// The store's release marks (none before the `v24-release-marks` migration).
    static func release(_ db: Database) throws -> StoreRelease {
        guard try db.tableExists("release_marks") else { return StoreRelease(oldestReader: nil, newestWriter: nil) }
        let rows = try Row.fetchAll(db, sql: "SELECT name, value FROM release_marks").map {
            (row: Row) -> (String, String) in (row[0], row[1])
        }
        return StoreRelease(rows: rows)
    }

    static func mark(_ release: StoreRelease, _ db: Database) throws {
        for (name, value) in release.rows {
            try db.execute(
                sql: "INSERT INTO release_marks (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = ?",
                arguments: [name, value, value])
        }
    }

    /// The release marks, for `herald --version` and tests.
    public func release() throws -> StoreRelease {
        try read { db in try Self.release(db) }
    }
}
