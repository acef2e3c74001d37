import GRDB
public import HeraldCore

/// Fanout jobs and their pages (`FanoutStore`).
extension SQLiteStore {
    // MARK: Fanouts

    public func createFanout(_ message: StoredMessage, job: FanoutJob, stats: [DeliveryStat]) async throws {
        let (kind, audience) = StoreCoding.encode(job.audience)
        try await write(short: true) { db in
            try Self.insert(message, db)
            try self.recordAccepted(message, db)
            try db.executeCached(
                sql: """
                    INSERT INTO fanouts (message_id, project_id, audience_kind, audience, body, created_at, expires_at,
                        state, cursor, delivered)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    job.messageID, job.projectID, kind, audience, job.body, job.createdAt.milliseconds,
                    job.expiresAt.milliseconds, job.state.rawValue, job.cursor, job.delivered,
                ])
            try self.record(stats, db)
        }
    }

    public func fanoutProgress(messageID: String) async throws -> (state: FanoutJob.State, reached: Int)? {
        try read { db in
            try db.fetchAllCached(
                sql: "SELECT state, delivered FROM fanouts WHERE message_id = ?", arguments: [messageID]
            ) { row in (FanoutJob.State(rawValue: row.text(0)) ?? .queued, Int(row.int64(1))) }.first
        }
    }

    public func unfinishedFanouts() async throws -> [FanoutJob] {
        try read { db in
            try Row.fetchAll(
                cached: db, sql: "SELECT * FROM fanouts WHERE state != 'done' ORDER BY created_at, message_id"
            )
            .compactMap { row in
                guard let audience = StoreCoding.decodeAudience(row["audience_kind"], row["audience"]) else {
                    return nil
                }
                return FanoutJob(
                    messageID: row["message_id"], projectID: row["project_id"], audience: audience,
                    body: row["body"],
                    createdAt: Timestamp(milliseconds: row["created_at"]),
                    expiresAt: Timestamp(milliseconds: row["expires_at"]),
                    state: FanoutJob.State(rawValue: row["state"]) ?? .queued,
                    firstDevices: StoreCoding.decodeDevices(row["first_devices"]), firstDone: row["first_done"],
                    cursor: row["cursor"], delivered: row["delivered"])
            }
        }
    }

    public func storeFanoutPage(
        messageID: String, queue: [QueuedMessage], firstDone: Int, cursor: String, reached: Int, done: Bool,
        limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        try await write(short: Self.isShort(queue.count)) { db in
            let (decisions, counted) = try Self.enqueue(queue, limits: limits, stats: stats, db)
            self.noteHandOffs(queue)
            try db.executeCached(
                sql: """
                    UPDATE fanouts SET first_done = ?, cursor = ?, delivered = delivered + ?, state = ?
                    WHERE message_id = ?
                    """,
                arguments: [firstDone, cursor, reached, done ? "done" : "running", messageID])
            guard db.changesCount > 0 else { throw StoreError.notFound("fanout \(messageID)") }
            try self.record(counted, db)
            return decisions
        }
    }

    public func startFanout(messageID: String, firstDevices: [UInt64]) async throws -> [UInt64] {
        try await write { db in
            try db.executeCached(
                sql:
                    "UPDATE fanouts SET state = 'running', first_devices = ? WHERE message_id = ? AND state = 'queued'",
                arguments: [StoreCoding.encode(devices: firstDevices), messageID])
            let stored = try String.fetchOne(
                cached: db, sql: "SELECT first_devices FROM fanouts WHERE message_id = ?", arguments: [messageID])
            return StoreCoding.decodeDevices(stored ?? "")
        }
    }
}
