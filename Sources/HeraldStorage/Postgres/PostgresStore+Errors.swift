public import HeraldCore
import PostgresNIO

/// The errors each project was answered with per hour (`StatsStore`).
extension PostgresStore {
    public func recordErrors(_ counts: [ErrorCount]) async throws {
        // Sorted, so that two nodes take the rows' locks in the same order.
        let sorted = counts.sorted {
            ($0.projectID, $0.hour, $0.code, $0.status) < ($1.projectID, $1.hour, $1.code, $1.status)
        }
        guard !sorted.isEmpty else { return }
        try await run(
            """
            INSERT INTO error_counts (project_id, hour, code, status, value)
            SELECT * FROM UNNEST(\(sorted.map(\.projectID))::text[], \(sorted.map(\.hour.milliseconds))::bigint[],
                \(sorted.map(\.code))::text[], \(sorted.map { Int32($0.status) })::integer[],
                \(sorted.map { Int64($0.count) })::bigint[])
            ON CONFLICT (project_id, hour, code, status) DO UPDATE SET value = error_counts.value + excluded.value
            """)
    }

    public func errorCounts(projectID: String, since: Timestamp) async throws -> [ErrorCount] {
        try await rows(
            """
            SELECT hour, code, status, value FROM error_counts
            WHERE project_id = \(projectID) AND hour >= \(since.milliseconds) ORDER BY hour, code
            """
        ).map { row in
            let (hour, code, status, value) = try row.decode((Int64, String, Int32, Int64).self)
            return ErrorCount(
                projectID: projectID, hour: Timestamp(milliseconds: hour), code: code, status: Int(status),
                count: Int(value))
        }
    }

    public func deleteErrorCounts(before: Timestamp, limit: Int) async throws -> Int {
        try await count(
            """
            DELETE FROM error_counts WHERE ctid IN (
                SELECT ctid FROM error_counts WHERE hour < \(before.milliseconds) LIMIT \(limit))
            RETURNING 1
            """)
    }
}
