public import HeraldCore
import NIOCore
import PostgresNIO

/// Messages and device queues (`QueueStore`).
extension PostgresStore {
    // MARK: Messages

    public func message(id: String) async throws -> StoredMessage? {
        try await rows(
            """
            SELECT id, project_id, target_kind, target, body, created_at, expires_at, analytics_label
            FROM messages WHERE id = \(id)
            """
        ).first.map { row in
            let (id, project, kind, target, body, created, expires, label) = try row.decode(
                (String, String, String, String, String, Int64, Int64, String).self)
            return StoredMessage(
                id: id, projectID: project, targetKind: TargetKind(stored: kind), target: target, body: body,
                createdAt: Timestamp(milliseconds: created), expiresAt: Timestamp(milliseconds: expires),
                analyticsLabel: label)
        }
    }

    public func messageCount(projectID: String) async throws -> Int {
        try await rows("SELECT COUNT(*) FROM messages WHERE project_id = \(projectID)").first?.decode(Int.self) ?? 0
    }

    /// Inserts messages: a part of a statement, its values placed in `binds`.
    static func insertion(of messages: [StoredMessage], _ binds: inout PostgresBindings) -> String {
        """
        INSERT INTO messages (id, project_id, target_kind, target, body, created_at, expires_at, analytics_label)
        SELECT * FROM UNNEST(\(binds.place(messages.map(\.id)))::text[], \(binds.place(messages.map(\.projectID)))::text[],
            \(binds.place(messages.map(\.targetKind.rawValue)))::text[], \(binds.place(messages.map(\.target)))::text[],
            \(binds.place(messages.map(\.body)))::text[], \(binds.place(messages.map(\.createdAt.milliseconds)))::bigint[],
            \(binds.place(messages.map(\.expiresAt.milliseconds)))::bigint[],
            \(binds.place(messages.map(\.analyticsLabel)))::text[])
        """
    }

    /// Stores `messages` and joins entries to their queues as `QueuePolicy` decides, adding
    /// `stats` and what the decisions collapse or drop, in four statements whatever the
    /// batch: the devices' rows are locked (in one order, so that two writers cannot
    /// deadlock) while the messages are inserted; their queues are read; then the deletions,
    /// insertions and counters are written together. Sequence numbers are taken by the
    /// insertion, while the devices are locked.
    func enqueue(
        _ queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat], messages: [StoredMessage] = [],
        on connection: PostgresConnection
    ) async throws -> [Enqueued] {
        if !messages.isEmpty || !stats.isEmpty { CreatedWork.add(.events) }
        if WorkSignals.handsOff(queue) { CreatedWork.add(.handOffs) }
        let devices = Array(Set(queue.map { Int64(bitPattern: $0.androidID) })).sorted()
        if !messages.isEmpty || !devices.isEmpty {
            var binds = PostgresBindings()
            let sql = """
                WITH inserted AS (\(Self.insertion(of: messages, &binds))),
                    accepted AS (\(Self.insertion(of: messages.compactMap { EventRows.accepted($0, node: self.nodeID) }, &binds)))
                SELECT 1 FROM devices WHERE android_id = ANY(\(binds.place(devices))) ORDER BY android_id FOR UPDATE
                """
            try await run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, prepared: true)
        }
        guard !queue.isEmpty else {
            try await record(stats, on: connection)
            return []
        }
        var taken: Set<QueueBatchPlan.DeviceMessage> = []
        var current: [QueuedMessage] = []
        for row in try await rows(
            """
            SELECT \(unescaped: Self.admissionColumns) FROM device_queue WHERE android_id = ANY(\(devices))
            ORDER BY sequence
            """, on: connection, prepared: true)
        {
            let entry = try Self.queued(row)
            taken.insert(.init(androidID: entry.androidID, persistentID: entry.persistentID))
            current.append(entry)
        }
        let plan = try QueueBatchPlan(
            storing: queue, current: current, taken: taken, limits: limits, stats: stats)
        var sequences: [QueueBatchPlan.DeviceMessage: Int64] = [:]
        var binds = PostgresBindings()
        let sql = """
            WITH deleted AS (DELETE FROM device_queue WHERE sequence = ANY(\(binds.place(plan.deletes)))),
                counted AS (\(Self.counting(plan.stats, &binds))),
                \(self.eventWriting(plan.stats, &binds))
            \(Self.insertion(of: plan.inserts, &binds)) RETURNING android_id, persistent_id, sequence
            """
        for row in try await rows(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, prepared: true) {
            let (device, persistentID, sequence) = try row.decode((Int64, String, Int64).self)
            sequences[.init(androidID: UInt64(bitPattern: device), persistentID: persistentID)] = sequence
        }
        return plan.enqueued(
            sequences: plan.inserts.map {
                sequences[.init(androidID: $0.androidID, persistentID: $0.persistentID)] ?? 0
            })
    }

    /// Inserts queue rows in entry order, the database numbering them: a part of a
    /// statement, its values placed in `binds`.
    static func insertion(of entries: [QueuedMessage], _ binds: inout PostgresBindings) -> String {
        """
        INSERT INTO device_queue (android_id, token, persistent_id, message_id, project_id, stanza,
            created_at, expires_at, collapse_key, is_high_priority, app_id, analytics_label, deleted_count, receipt_id,
            keeps_events)
        SELECT android_id, token, persistent_id, message_id, NULLIF(project_id, ''), stanza, created_at, expires_at,
            CASE WHEN has_collapse_key THEN collapse_key END, is_high_priority, app_id, analytics_label,
            deleted_count, receipt_id, keeps_events
        FROM UNNEST(\(binds.place(entries.map { Int64(bitPattern: $0.androidID) }))::bigint[],
            \(binds.place(entries.map(\.token)))::text[], \(binds.place(entries.map(\.persistentID)))::text[],
            \(binds.place(entries.map(\.messageID)))::text[], \(binds.place(entries.map(\.projectID)))::text[],
            \(binds.place(entries.map { ByteBuffer(bytes: $0.stanza) }))::bytea[],
            \(binds.place(entries.map(\.createdAt.milliseconds)))::bigint[],
            \(binds.place(entries.map(\.expiresAt.milliseconds)))::bigint[],
            \(binds.place(entries.map { $0.collapseKey ?? "" }))::text[],
            \(binds.place(entries.map { $0.collapseKey != nil }))::bool[],
            \(binds.place(entries.map(\.isHighPriority)))::bool[], \(binds.place(entries.map(\.appID)))::text[],
            \(binds.place(entries.map(\.analyticsLabel)))::text[],
            \(binds.place(entries.map { Int64($0.deletedCount) }))::bigint[],
            \(binds.place(entries.map(\.receiptID)))::text[],
            \(binds.place(entries.map { Int32($0.keepsEvents ? 1 : 0) }))::integer[])
            WITH ORDINALITY AS rows(android_id, token, persistent_id, message_id, project_id, stanza, created_at,
                expires_at, collapse_key, has_collapse_key, is_high_priority, app_id, analytics_label,
                deleted_count, receipt_id, keeps_events, position)
        ORDER BY position
        """
    }

    // MARK: Device queues

    public func pendingMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp) async throws
        -> [QueuedMessage]
    {
        try await rows(
            """
            SELECT \(unescaped: Self.queueColumns) FROM device_queue
            WHERE android_id = \(Int64(bitPattern: androidID)) AND sequence > \(sequence)
                AND expires_at > \(now.milliseconds)
            ORDER BY sequence LIMIT \(limit)
            """, prepared: true
        ).map(Self.queued)
    }

    public func pendingHighPriorityMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        async throws -> [QueuedMessage]
    {
        try await rows(
            """
            SELECT \(unescaped: Self.queueColumns) FROM device_queue
            WHERE android_id = \(Int64(bitPattern: androidID)) AND sequence > \(sequence)
                AND expires_at > \(now.milliseconds) AND is_high_priority
            ORDER BY sequence LIMIT \(limit)
            """, prepared: true
        ).map(Self.queued)
    }

    public func acknowledge(androidID: UInt64, persistentIDs: [String]) async throws -> Int {
        try await acknowledge(batch: [androidID: persistentIDs])
    }

    public func withdraw(androidID: UInt64, persistentID: String) async throws -> Bool {
        try await count(
            """
            DELETE FROM device_queue WHERE android_id = \(Int64(bitPattern: androidID)) AND persistent_id = \(persistentID)
            RETURNING 1
            """) > 0
    }

    public func acknowledge(batch: [UInt64: [String]]) async throws -> Int {
        var devices: [Int64] = []
        var ids: [String] = []
        for (androidID, persistentIDs) in batch {
            for id in persistentIDs {
                devices.append(Int64(bitPattern: androidID))
                ids.append(id)
            }
        }
        guard !ids.isEmpty else { return 0 }
        return try await transaction { connection in
            // A row of a message sent with a receipt requested leaves its receipt (`UpstreamStore`):
            // an XMPP receipt for a project's message, a push receipt for a Web Push message.
            let removed = try await self.rows(
                """
                WITH removed AS (
                    DELETE FROM device_queue AS queue
                    USING UNNEST(\(devices)::bigint[], \(ids)::text[]) AS acknowledged(android_id, persistent_id)
                    WHERE queue.android_id = acknowledged.android_id
                        AND queue.persistent_id = acknowledged.persistent_id
                    RETURNING queue.*),
                receipts AS (
                    INSERT INTO upstream_messages
                        (project_id, kind, message_id, token, category, android_id, data, created_at, expires_at)
                    SELECT project_id, 'receipt', \(UpstreamMessage.receiptPrefix)::text || receipt_id, token, app_id,
                        android_id, '', now_ms, now_ms + \(UpstreamMessage.receiptLifetimeSeconds * 1000)
                    FROM removed, (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms) AS clock
                    WHERE receipt_id <> '' AND project_id IS NOT NULL
                    ON CONFLICT DO NOTHING),
                push_receipts AS (
                    INSERT INTO push_receipts (subscription, token, message_id, acknowledged_at, expires_at)
                    SELECT receipt_id, token, persistent_id, now_ms, now_ms + \(PushReceipt.lifetimeSeconds * 1000)
                    FROM removed, (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms) AS clock
                    WHERE receipt_id <> '' AND project_id IS NULL
                    ON CONFLICT DO NOTHING)
                SELECT \(unescaped: Self.queueColumns) FROM removed
                """, on: connection, prepared: true
            ).map(Self.queued)
            try await self.record(
                removed.filter { $0.deletedCount == 0 }.map { $0.stat(.delivered) }, on: connection)
            return removed.count
        }
    }

    public func deleteExpired(now: Timestamp, limit: Int) async throws -> Int {
        try await transaction { connection in
            try await self.run(
                """
                DELETE FROM messages WHERE id IN (
                    SELECT id FROM messages WHERE expires_at <= \(now.milliseconds) LIMIT \(limit))
                """, on: connection)
            let expired = try await self.rows(
                """
                DELETE FROM device_queue WHERE sequence IN (
                    SELECT sequence FROM device_queue WHERE expires_at <= \(now.milliseconds)
                    ORDER BY expires_at LIMIT \(limit))
                RETURNING \(unescaped: Self.queueColumns)
                """, on: connection
            ).map(Self.queued)
            try await self.record(
                expired.filter { $0.deletedCount == 0 }.map { $0.stat(.expired) }, on: connection)
            return expired.count
        }
    }

    public func queuedCount(androidID: UInt64) async throws -> Int {
        try await rows("SELECT COUNT(*) FROM device_queue WHERE android_id = \(Int64(bitPattern: androidID))")
            .first?.decode(Int.self) ?? 0
    }

    static let queueColumns = SQLiteStore.queueColumns(stanza: "stanza")
    static let admissionColumns = SQLiteStore.queueColumns(stanza: "''::bytea AS stanza")

    static func queued(_ row: PostgresRow) throws -> QueuedMessage {
        let (
            sequence, device, token, persistentID, messageID, project, stanza, created, expires, collapseKey, high,
            app, label, deleted, keepsEvents
        ) = try row.decode(
            (
                Int64, Int64, String, String, String, String, ByteBuffer, Int64, Int64, String?, Bool, String, String,
                Int64, Int32
            ).self)
        return QueuedMessage(
            sequence: sequence, androidID: UInt64(bitPattern: device), token: token, persistentID: persistentID,
            messageID: messageID, projectID: project, stanza: Array(stanza.readableBytesView),
            createdAt: Timestamp(milliseconds: created), expiresAt: Timestamp(milliseconds: expires),
            collapseKey: collapseKey, isHighPriority: high, appID: app, analyticsLabel: label,
            deletedCount: Int(deleted), keepsEvents: keepsEvents != 0)
    }
}
