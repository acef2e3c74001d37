import GRDB

/// What one transaction does to the messages still queued, added up per project, day (of
/// acceptance, days since 1970), app and label, and written to `pending_counts` with one
/// statement a key: a fanout page of a thousand entries changes one row, not a thousand.
/// Deletion signals and push-channel messages (no project) are not counted.
struct PendingCounts {
    private struct Key: Hashable {
        var projectID: String
        var day: Int64
        var appID: String
        var label: String
    }

    private var changes: [Key: Int] = [:]

    /// Counts one queue row stored (`amount` 1) or deleted (-1).
    mutating func add(
        _ amount: Int, projectID: String, createdAt: Int64, appID: String, label: String, deletedCount: Int64
    ) {
        guard !projectID.isEmpty, deletedCount == 0 else { return }
        changes[Key(projectID: projectID, day: createdAt / 86_400_000, appID: appID, label: label), default: 0] +=
            amount
    }

    func write(_ db: Database) throws {
        for (key, amount) in changes where amount != 0 {
            try db.executeCached(
                sql: """
                    INSERT INTO pending_counts (project_id, day, app_id, label, value) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (project_id, day, app_id, label) DO UPDATE SET value = value + excluded.value
                    """,
                arguments: [key.projectID, key.day, key.appID, key.label, amount])
        }
    }
}
