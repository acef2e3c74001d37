import GRDB
public import HeraldCore

/// Messages and device queues (`QueueStore`).
extension SQLiteStore {
    // MARK: Messages

    public func appendMessages(
        _ messages: [StoredMessage], queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        try await write(short: Self.isShort(messages.count + queue.count)) { db in
            for message in messages {
                try Self.insert(message, db)
                try self.recordAccepted(message, db)
            }
            let (decisions, counted) = try Self.enqueue(queue, limits: limits, stats: stats, db)
            self.noteHandOffs(queue)
            try self.record(counted, db)
            return decisions
        }
    }

    /// Entries of `queue` for app instances of another push service wake the hand-off
    /// forwarder once the writer's transaction commits.
    func noteHandOffs(_ queue: [QueuedMessage]) {
        if WorkSignals.handsOff(queue) { workObserver.note(.handOffs) }
    }

    /// Joins entries to their queues as `QueueBatchPlan` decides; answers the outcomes and
    /// `stats` plus what they collapsed or dropped.
    static func enqueue(_ queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat], _ db: Database)
        throws -> ([Enqueued], [DeliveryStat])
    {
        guard !queue.isEmpty else { return ([], stats) }
        // The batch's entries by device. A pending row is compared in place with the entries
        // of its device: only rows of an entry's token are read into values, and a persistent
        // id only when it equals an entry's (making strings of every row cost more than the rest).
        var incoming: [Int64: [Int]] = [:]
        // By index: a loop over the entries themselves copies each whole entry.
        for index in queue.indices {
            incoming[Int64(bitPattern: queue[index].androidID), default: []].append(index)
        }
        var current: [QueuedMessage] = []
        var taken: Set<QueueBatchPlan.DeviceMessage> = []
        try Self.forEachRow(
            db, "SELECT \(Self.admissionColumns) FROM device_queue WHERE android_id IN (?) ORDER BY sequence",
            of: Array(incoming.keys)
        ) { row in
            guard let entries = incoming[row.int64(1)] else { return }
            for index in entries where row.text(3, equals: queue[index].persistentID) {
                taken.insert(.init(androidID: queue[index].androidID, persistentID: queue[index].persistentID))
            }
            guard let owner = entries.first(where: { row.text(2, equals: queue[$0].token) }) else { return }
            current.append(Self.pending(row, token: queue[owner].token))
        }
        let plan = try QueueBatchPlan(
            storing: queue, current: current, taken: taken, limits: limits, stats: stats)
        var pending = PendingCounts()
        for sequence in plan.deletes {
            try db.forEachCached(
                sql: """
                    DELETE FROM device_queue WHERE sequence = ?
                    RETURNING COALESCE(project_id, ''), created_at, app_id, analytics_label, deleted_count
                    """,
                arguments: [sequence]
            ) { row in
                pending.add(
                    -1, projectID: row.text(0), createdAt: row.int64(1), appID: row.text(2), label: row.text(3),
                    deletedCount: row.int64(4))
            }
        }
        var shared = SharedStanzas(plan.inserts)
        var sequences: [Int64] = []
        sequences.reserveCapacity(plan.inserts.count)
        for index in plan.inserts.indices {
            let row = plan.inserts[index]
            sequences.append(try insert(row, stanzaID: shared.id(of: row.stanza, db), db))
            pending.add(
                1, projectID: row.projectID, createdAt: row.createdAt.milliseconds, appID: row.appID,
                label: row.analyticsLabel, deletedCount: Int64(row.deletedCount))
        }
        try pending.write(db)
        return (plan.enqueued(sequences: sequences), plan.stats)
    }

    /// Deletes the queue rows matching `condition`; answers how many, the statistics keys of
    /// the messages among them, and the receipts the rows of messages sent with a receipt
    /// requested call for, should their deletion be an acknowledgement.
    static func deleteQueued(where condition: String, _ arguments: StatementArguments, _ db: Database)
        throws -> (count: Int, messages: [GoneEntry], receipts: [UpstreamMessage], pushReceipts: [PushReceipt])
    {
        var pending = PendingCounts()
        let deleted = try deleteQueued(where: condition, arguments, db, pending: &pending)
        try pending.write(db)
        return deleted
    }

    /// `deleteQueued(where:_:_:)` adding to `pending`, which the caller writes once for
    /// many deletions.
    static func deleteQueued(
        where condition: String, _ arguments: StatementArguments, _ db: Database, pending: inout PendingCounts
    ) throws -> (count: Int, messages: [GoneEntry], receipts: [UpstreamMessage], pushReceipts: [PushReceipt]) {
        var count = 0
        var messages: [GoneEntry] = []
        var receipts: [UpstreamMessage] = []
        var pushReceipts: [PushReceipt] = []
        try db.forEachCached(
            sql: """
                DELETE FROM device_queue WHERE \(condition)
                RETURNING COALESCE(project_id, ''), created_at, app_id, analytics_label, deleted_count, receipt_id, token, android_id,
                    persistent_id, message_id, keeps_events
                """,
            arguments: arguments
        ) { row in
            count += 1
            pending.add(
                -1, projectID: row.text(0), createdAt: row.int64(1), appID: row.text(2), label: row.text(3),
                deletedCount: row.int64(4))
            if row.int64(4) == 0 {
                messages.append(
                    GoneEntry(
                        key: DeliveryStatKey(
                            projectID: row.text(0), at: Timestamp(milliseconds: row.int64(1)), appID: row.text(2),
                            label: row.text(3)),
                        fact: DeliveryFact(
                            messageID: row.text(9), token: row.text(6), eachKept: row.int64(10) != 0,
                            isHandOff: Device.isHandOff(UInt64(bitPattern: row.int64(7))))))
            }
            guard !row.text(5, equals: "") else { return }  // no receipt asked for
            if row.text(0, equals: "") {
                // A Web Push message: the receipt goes to the subscription its sender named.
                pushReceipts.append(
                    PushReceipt(
                        subscription: row.text(5), token: row.text(6), messageID: row.text(8),
                        acknowledgedAt: SystemClock().now()))
            } else {
                receipts.append(
                    UpstreamMessage.receipt(
                        projectID: row.text(0), originalMessageID: row.text(5), token: row.text(6),
                        category: row.text(2), androidID: UInt64(bitPattern: row.int64(7)), at: SystemClock().now()))
            }
        }
        return (count, messages, receipts, pushReceipts)
    }

    /// name), `stanza` standing for the row's stanza.
    static func queueColumns(stanza: String) -> String {
        """
        sequence, android_id, token, persistent_id, message_id, COALESCE(project_id, ''), \(stanza), created_at, \
        expires_at, \
        collapse_key, is_high_priority, app_id, analytics_label, deleted_count, keeps_events
        """
    }

    /// A row's own stanza, or the one it shares.
    static let queueColumns = queueColumns(
        stanza: """
            CASE WHEN stanza_id IS NULL THEN stanza \
            ELSE (SELECT queue_stanzas.stanza FROM queue_stanzas WHERE queue_stanzas.id = stanza_id) END
            """)

    /// The queue columns with an empty stanza: what admitting a message looks at, without
    /// reading every pending message's payload for each new one.
    static let admissionColumns = queueColumns(stanza: "X''")

    /// A pending row read with `admissionColumns`, as admitting another entry sees it: the
    /// token is the caller's and its persistent id is not read; its message id is, for the
    /// event of its collapse or drop.
    static func pending(_ row: ColumnReader, token: String) -> QueuedMessage {
        QueuedMessage(
            sequence: row.int64(0), androidID: UInt64(bitPattern: row.int64(1)), token: token, persistentID: "",
            messageID: row.text(4), projectID: row.text(5), stanza: [],
            createdAt: Timestamp(milliseconds: row.int64(7)),
            expiresAt: Timestamp(milliseconds: row.int64(8)), collapseKey: row.optionalText(9),
            isHighPriority: row.int64(10) != 0, appID: row.text(11), analyticsLabel: row.text(12),
            deletedCount: Int(row.int64(13)), keepsEvents: row.int64(14) != 0)
    }

    static func queued(_ row: ColumnReader) -> QueuedMessage {
        QueuedMessage(
            sequence: row.int64(0), androidID: UInt64(bitPattern: row.int64(1)), token: row.text(2),
            persistentID: row.text(3), messageID: row.text(4), projectID: row.text(5), stanza: row.bytes(6) ?? [],
            createdAt: Timestamp(milliseconds: row.int64(7)), expiresAt: Timestamp(milliseconds: row.int64(8)),
            collapseKey: row.optionalText(9), isHighPriority: row.int64(10) != 0, appID: row.text(11),
            analyticsLabel: row.text(12), deletedCount: Int(row.int64(13)), keepsEvents: row.int64(14) != 0)
    }

    /// Inserts an accepted message's record.
    static func insert(_ message: StoredMessage, _ db: Database) throws {
        try db.executeCached(
            sql: """
                INSERT INTO messages (id, project_id, target_kind, target, body, created_at, expires_at, analytics_label)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                message.id, message.projectID, message.targetKind.rawValue, message.target, message.body,
                message.createdAt.milliseconds, message.expiresAt.milliseconds, message.analyticsLabel,
            ])
    }

    public func message(id: String) async throws -> StoredMessage? {
        try read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM messages WHERE id = ?", arguments: [id]).map { row in
                StoredMessage(
                    id: row["id"], projectID: row["project_id"], targetKind: TargetKind(stored: row["target_kind"]),
                    target: row["target"],
                    body: row["body"], createdAt: Timestamp(milliseconds: row["created_at"]),
                    expiresAt: Timestamp(milliseconds: row["expires_at"]), analyticsLabel: row["analytics_label"])
            }
        }
    }

    public func messageCount(projectID: String) async throws -> Int {
        try read { db in
            try Int.fetchOne(
                cached: db, sql: "SELECT COUNT(*) FROM messages WHERE project_id = ?", arguments: [projectID]) ?? 0
        }
    }

    // MARK: Device queues

    public func pendingMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp) async throws
        -> [QueuedMessage]
    {
        try await pending(androidID: androidID, after: sequence, limit: limit, now: now, highPriorityOnly: false)
    }

    public func pendingHighPriorityMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        async throws -> [QueuedMessage]
    {
        try await pending(androidID: androidID, after: sequence, limit: limit, now: now, highPriorityOnly: true)
    }

    func pending(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp, highPriorityOnly: Bool)
        async throws -> [QueuedMessage]
    {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.queueColumns) FROM device_queue WHERE android_id = ? AND sequence > ? AND expires_at > ?
                    \(highPriorityOnly ? "AND is_high_priority = 1" : "")
                    ORDER BY sequence LIMIT ?
                    """,
                arguments: [Int64(bitPattern: androidID), sequence, now.milliseconds, limit], Self.queued)
        }
    }

    public func acknowledge(androidID: UInt64, persistentIDs: [String]) async throws -> Int {
        try await acknowledge(batch: [androidID: persistentIDs])
    }

    public func withdraw(androidID: UInt64, persistentID: String) async throws -> Bool {
        try await write(short: true) { db in
            try Self.deleteQueued(
                where: "android_id = ? AND persistent_id = ?", [Int64(bitPattern: androidID), persistentID], db
            ).count > 0
        }
    }

    public func acknowledge(batch: [UInt64: [String]]) async throws -> Int {
        guard batch.values.contains(where: { !$0.isEmpty }) else { return 0 }
        return try await write { db in
            var removed = 0
            var delivered: [DeliveryStat] = []
            var receipts: [UpstreamMessage] = []
            var pushReceipts: [PushReceipt] = []
            // The queued counts change once for the whole batch.
            var pending = PendingCounts()
            for (androidID, ids) in batch {
                for id in ids {
                    let gone = try Self.deleteQueued(
                        where: "android_id = ? AND persistent_id = ?", [Int64(bitPattern: androidID), id], db,
                        pending: &pending)
                    removed += gone.count
                    delivered += gone.messages.map { $0.stat(.delivered) }
                    receipts += gone.receipts
                    pushReceipts += gone.pushReceipts
                }
            }
            try pending.write(db)
            try self.record(delivered, db)
            if !receipts.isEmpty { _ = try Self.insertUpstream(receipts, db) }
            try Self.insertPushReceipts(pushReceipts, db)
            return removed
        }
    }

    public func deleteExpired(now: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: "DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE expires_at <= ? LIMIT ?)",
                arguments: [now.milliseconds, limit])
            let expired = try Self.deleteQueued(
                where:
                    "sequence IN (SELECT sequence FROM device_queue WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
                [now.milliseconds, limit], db)
            try self.record(expired.messages.map { $0.stat(.expired) }, db)
            // Shared stanzas no row points at any more (their rows were acknowledged, expired,
            // replaced or unregistered), looked for among at most `limit` of them, from where the
            // last sweep stopped: a sweep stays short however many stanzas offline queues hold.
            let start = self.stanzaSweepPosition.withLock { $0 }
            let probed = try Row.fetchOne(
                db,
                sql: "SELECT COUNT(*), MAX(id) FROM (SELECT id FROM queue_stanzas WHERE id > ? ORDER BY id LIMIT ?)",
                arguments: [start, limit])
            let (count, end): (Int, Int64) = (probed?[0] ?? 0, probed?[1] ?? start)
            try db.executeCached(
                sql: """
                    DELETE FROM queue_stanzas WHERE id > ? AND id <= ?
                    AND NOT EXISTS (SELECT 1 FROM device_queue WHERE stanza_id = queue_stanzas.id)
                    """,
                arguments: [start, end])
            self.stanzaSweepPosition.withLock { $0 = count < limit ? 0 : end }
            return expired.count
        }
    }

    public func queuedCount(androidID: UInt64) async throws -> Int {
        try read { db in
            try Int.fetchOne(
                cached: db, sql: "SELECT COUNT(*) FROM device_queue WHERE android_id = ?",
                arguments: [Int64(bitPattern: androidID)]
            ) ?? 0
        }
    }
}
