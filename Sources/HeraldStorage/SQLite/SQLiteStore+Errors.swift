import GRDB
public import HeraldCore

/// The errors each project was answered with per hour (`StatsStore`).
extension SQLiteStore {
    public func recordErrors(_ counts: [ErrorCount]) async throws {
        guard !counts.isEmpty else { return }
        try await write(short: SQLiteStore.isShort(counts.count)) { db in
            for count in counts {
                try db.executeCached(
                    sql: """
                        INSERT INTO error_counts (project_id, hour, code, status, value) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (project_id, hour, code, status) DO UPDATE SET value = value + excluded.value
                        """,
                    arguments: [count.projectID, count.hour.milliseconds, count.code, count.status, count.count])
            }
        }
    }

    public func errorCounts(projectID: String, since: Timestamp) async throws -> [ErrorCount] {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT hour, code, status, value FROM error_counts WHERE project_id = ? AND hour >= ?
                    ORDER BY hour, code
                    """,
                arguments: [projectID, since.milliseconds]
            ) { row in
                ErrorCount(
                    projectID: projectID, hour: Timestamp(milliseconds: row.int64(0)), code: row.text(1),
                    status: Int(row.int64(2)), count: Int(row.int64(3)))
            }
        }
    }

    public func deleteErrorCounts(before: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: """
                    DELETE FROM error_counts WHERE rowid IN (SELECT rowid FROM error_counts WHERE hour < ? LIMIT ?)
                    """,
                arguments: [before.milliseconds, limit])
            return db.changesCount
        }
    }
}
