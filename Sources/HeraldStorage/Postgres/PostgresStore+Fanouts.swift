public import HeraldCore
import PostgresNIO

/// Fanout jobs and their pages (`FanoutStore`).
extension PostgresStore {
    // MARK: Fanouts

    /// Stores the fanout claimed by this node, which expands it.
    public func createFanout(_ message: StoredMessage, job: FanoutJob, stats: [DeliveryStat]) async throws {
        let (kind, audience) = StoreCoding.encode(job.audience)
        try await transaction { connection in
            var binds = PostgresBindings()
            let sql = """
                WITH inserted AS (\(Self.insertion(of: [message], &binds))),
                    accepted AS (\(Self.insertion(of: [EventRows.accepted(message, node: self.nodeID)].compactMap { $0 }, &binds)))
                INSERT INTO fanouts (message_id, project_id, audience_kind, audience, body, created_at, expires_at,
                    state, cursor, delivered, owner_node)
                VALUES (\(binds.place(job.messageID)), \(binds.place(job.projectID)), \(binds.place(kind)),
                    \(binds.place(audience)), \(binds.place(job.body)), \(binds.place(job.createdAt.milliseconds)),
                    \(binds.place(job.expiresAt.milliseconds)), \(binds.place(job.state.rawValue)),
                    \(binds.place(job.cursor)), \(binds.place(job.delivered)), \(binds.place(self.nodeID)))
                """
            try await self.run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection)
            CreatedWork.add(.events)
            try await self.record(stats, on: connection)
        }
    }

    /// The unfinished jobs this node has claimed.
    public func fanoutProgress(messageID: String) async throws -> (state: FanoutJob.State, reached: Int)? {
        try await rows("SELECT state, delivered FROM fanouts WHERE message_id = \(messageID)").first.map { row in
            let (state, reached) = try row.decode((String, Int).self)
            return (FanoutJob.State(rawValue: state) ?? .queued, reached)
        }
    }

    public func unfinishedFanouts() async throws -> [FanoutJob] {
        try await rows(
            """
            SELECT message_id, project_id, audience_kind, audience, body, created_at, expires_at, state,
                first_devices, first_done, cursor, delivered
            FROM fanouts WHERE state <> 'done' AND owner_node = \(nodeID) ORDER BY created_at, message_id
            """
        ).compactMap { row in
            let (id, project, kind, value, body, created, expires, state, first, firstDone, cursor, delivered) =
                try row.decode(
                    (String, String, String, String, String, Int64, Int64, String, String, Int, String, Int).self)
            guard let audience = StoreCoding.decodeAudience(kind, value) else { return nil }
            return FanoutJob(
                messageID: id, projectID: project, audience: audience, body: body,
                createdAt: Timestamp(milliseconds: created), expiresAt: Timestamp(milliseconds: expires),
                state: FanoutJob.State(rawValue: state) ?? .queued, firstDevices: StoreCoding.decodeDevices(first),
                firstDone: firstDone, cursor: cursor, delivered: delivered)
        }
    }

    /// Stores a page only while this node still holds the job: a node that was taken for
    /// dead and whose job moved on stores nothing more of it.
    public func storeFanoutPage(
        messageID: String, queue: [QueuedMessage], firstDone: Int, cursor: String, reached: Int, done: Bool,
        limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        try await transaction { connection in
            let owned = try await self.count(
                """
                UPDATE fanouts SET first_done = \(firstDone), cursor = \(cursor), delivered = delivered + \(reached),
                    state = \(done ? "done" : "running")
                WHERE message_id = \(messageID) AND owner_node = \(self.nodeID) RETURNING 1
                """, on: connection)
            guard owned > 0 else { throw StoreError.notFound("fanout \(messageID) held by this node") }
            return try await self.enqueue(queue, limits: limits, stats: stats, on: connection)
        }
    }

    public func startFanout(messageID: String, firstDevices: [UInt64]) async throws -> [UInt64] {
        try await run(
            """
            UPDATE fanouts SET state = 'running', first_devices = \(StoreCoding.encode(devices: firstDevices))
            WHERE message_id = \(messageID) AND state = 'queued'
            """)
        let stored = try await rows("SELECT first_devices FROM fanouts WHERE message_id = \(messageID)")
        return try StoreCoding.decodeDevices(stored.first?.decode(String.self) ?? "")
    }
}
