import GRDB
public import HeraldCore

/// Delivery counters and receipts (`StatsStore`).
extension SQLiteStore {
    public func record(_ stats: [DeliveryStat]) async throws {
        guard !stats.isEmpty else { return }
        try await write(short: Self.isShort(stats.count)) { db in try self.record(stats, db) }
    }

    public func recordReceipt(_ stat: DeliveryStat, messageID: String, androidID: UInt64) async throws -> Bool {
        try await write(short: true) { db in
            try db.executeCached(
                sql: "INSERT OR IGNORE INTO receipts (message_id, android_id, counter) VALUES (?, ?, ?)",
                arguments: [messageID, Int64(bitPattern: androidID), stat.counter.rawValue])
            guard db.changesCount == 1 else { return false }
            try self.record([stat], db)
            return true
        }
    }

    public func receiptCounts(messageID: String) async throws -> [DeliveryCounter: Int] {
        try read { db in
            try db.fetchAllCached(
                sql: "SELECT counter, COUNT(*) FROM receipts WHERE message_id = ? GROUP BY counter",
                arguments: [messageID]
            ) { row in (DeliveryCounter(rawValue: row.text(0)), Int(row.int64(1))) }
            .reduce(into: [:]) { counts, pair in if let counter = pair.0 { counts[counter] = pair.1 } }
        }
    }

    public func deliveryReport(projectID: String, appID: String?, from: CalendarDay, through: CalendarDay)
        async throws -> [DeliveryReportRow]
    {
        try read { db in
            let counters = try Row.fetchAll(
                cached: db,
                sql: """
                    SELECT day, app_id, label, counter, value FROM delivery_stats
                    WHERE project_id = ? AND day >= ? AND day <= ? \(appID == nil ? "" : "AND app_id = ?")
                    """,
                arguments: StatementArguments(
                    [projectID, from.description, through.description] + (appID.map { [$0] } ?? []))
            ).map { StoreCoding.CounterRow(day: $0[0], appID: $0[1], label: $0[2], counter: $0[3], value: $0[4]) }
            let queued = try Row.fetchAll(
                cached: db,
                sql: """
                    SELECT day, app_id, label, value FROM pending_counts
                    WHERE project_id = ? AND day >= ? AND day <= ? AND value > 0 \(appID == nil ? "" : "AND app_id = ?")
                    """,
                arguments: [projectID, from.daysSince1970, through.daysSince1970]
                    + StatementArguments(appID.map { [$0] } ?? [])
            ).map { StoreCoding.PendingRow(day: $0[0], appID: $0[1], label: $0[2], count: $0[3]) }
            return StoreCoding.report(
                projectID: projectID, counters: counters, queued: queued, from: from, through: through)
        }
    }

    /// Adds `stats` to the counters, and writes the events and counts of their facts.
    func record(_ stats: [DeliveryStat], _ db: Database) throws {
        try recordEvents(stats, db)
        for (key, counter, amount) in StoreCoding.totals(stats) {
            try db.executeCached(
                sql: """
                    INSERT INTO delivery_stats (project_id, day, app_id, label, counter, value)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (project_id, day, app_id, label, counter) DO UPDATE SET value = value + excluded.value
                    """,
                arguments: [key.projectID, key.day, key.appID, key.label, counter.rawValue, amount])
        }
    }

    /// The queue columns in the order `queued(_:)` reads them by position (faster than by
}
