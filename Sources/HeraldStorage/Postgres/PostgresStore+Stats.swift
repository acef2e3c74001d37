public import HeraldCore
import PostgresNIO

/// Delivery counters and receipts (`StatsStore`).
extension PostgresStore {
    // MARK: Delivery reports

    public func record(_ stats: [DeliveryStat]) async throws {
        guard !stats.isEmpty else { return }
        try await transaction { connection in try await self.record(stats, on: connection) }
    }

    public func recordReceipt(_ stat: DeliveryStat, messageID: String, androidID: UInt64) async throws -> Bool {
        try await transaction { connection in
            let inserted = try await self.count(
                """
                INSERT INTO receipts (message_id, android_id, counter)
                VALUES (\(messageID), \(Int64(bitPattern: androidID)), \(stat.counter.rawValue))
                ON CONFLICT DO NOTHING RETURNING 1
                """, on: connection)
            guard inserted == 1 else { return false }
            try await self.record([stat], on: connection)
            return true
        }
    }

    /// Rows each delivery counter is spread over.
    static let counterShards: Int16 = 16

    func record(_ stats: [DeliveryStat], on connection: PostgresConnection) async throws {
        guard !stats.isEmpty else { return }
        CreatedWork.add(.events)
        var binds = PostgresBindings()
        let sql = "WITH \(eventWriting(stats, &binds)) \(Self.counting(stats, &binds))"
        try await run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, prepared: true)
    }

    /// Adds to delivery counters: a statement or a part of one, its values placed in
    /// `binds`. Every send adds to the same few counters, so each is kept in
    /// `counterShards` rows and a statement adds to one of them: concurrent writers seldom
    /// wait for each other's commit. Sorted, so that two writers take the rows' locks in
    /// the same order.
    static func counting(_ stats: [DeliveryStat], _ binds: inout PostgresBindings) -> String {
        let totals = StoreCoding.totals(stats).sorted {
            ($0.key.projectID, $0.key.day, $0.key.appID, $0.key.label, $0.counter.rawValue)
                < ($1.key.projectID, $1.key.day, $1.key.appID, $1.key.label, $1.counter.rawValue)
        }
        return """
            INSERT INTO delivery_stats (project_id, day, app_id, label, counter, shard, value)
            SELECT project_id, day, app_id, label, counter, \(binds.place(Int16.random(in: 0..<counterShards))), value
            FROM UNNEST(\(binds.place(totals.map(\.key.projectID)))::text[], \(binds.place(totals.map(\.key.day)))::text[],
                \(binds.place(totals.map(\.key.appID)))::text[], \(binds.place(totals.map(\.key.label)))::text[],
                \(binds.place(totals.map(\.counter.rawValue)))::text[],
                \(binds.place(totals.map { Int64($0.amount) }))::bigint[])
                AS rows(project_id, day, app_id, label, counter, value)
            ON CONFLICT (project_id, day, app_id, label, counter, shard)
            DO UPDATE SET value = delivery_stats.value + excluded.value
            """
    }

    public func receiptCounts(messageID: String) async throws -> [DeliveryCounter: Int] {
        try await rows("SELECT counter, COUNT(*) FROM receipts WHERE message_id = \(messageID) GROUP BY counter")
            .reduce(into: [:]) { counts, row in
                let (counter, count) = try row.decode((String, Int64).self)
                if let counter = DeliveryCounter(rawValue: counter) { counts[counter] = Int(count) }
            }
    }

    public func deliveryReport(projectID: String, appID: String?, from: CalendarDay, through: CalendarDay)
        async throws -> [DeliveryReportRow]
    {
        let counters = try await rows(
            """
            SELECT day, app_id, label, counter, SUM(value)::bigint FROM delivery_stats
            WHERE project_id = \(projectID) AND day >= \(from.description) AND day <= \(through.description)
                AND (\(appID)::text IS NULL OR app_id = \(appID))
            GROUP BY day, app_id, label, counter
            """
        ).map { row in
            let (day, app, label, counter, value) = try row.decode((String, String, String, String, Int).self)
            return StoreCoding.CounterRow(day: day, appID: app, label: label, counter: counter, value: value)
        }
        // Counted in the database, a row per day, app and label, not a row per message.
        let queued = try await rows(
            """
            SELECT created_at / 86400000, app_id, analytics_label, COUNT(*) FROM device_queue
            WHERE project_id = \(projectID) AND deleted_count = 0 AND (\(appID)::text IS NULL OR app_id = \(appID))
                AND created_at >= \(from.daysSince1970 * 86_400_000)
                AND created_at < \((through.daysSince1970 + 1) * 86_400_000)
            GROUP BY 1, 2, 3
            """
        ).map { row in
            let (day, app, label, count) = try row.decode((Int64, String, String, Int64).self)
            return StoreCoding.PendingRow(day: day, appID: app, label: label, count: Int(count))
        }
        return StoreCoding.report(
            projectID: projectID, counters: counters, queued: queued, from: from, through: through)
    }
}
