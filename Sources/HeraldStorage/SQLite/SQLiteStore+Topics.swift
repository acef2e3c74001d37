import GRDB
public import HeraldCore

/// Topic subscriptions, audiences and device groups (`TopicStore`).
extension SQLiteStore {
    // MARK: Topics

    public func subscribe(_ subscription: TopicSubscription, limit: Int) async throws -> Bool {
        try await write { db in
            if try Bool.fetchOne(
                cached: db, sql: "SELECT 1 FROM topic_subscriptions WHERE token = ? AND topic = ?",
                arguments: [subscription.token, subscription.topic]) != nil
            {
                return false
            }
            let count =
                try Int.fetchOne(
                    cached: db, sql: "SELECT COUNT(*) FROM topic_subscriptions WHERE token = ?",
                    arguments: [subscription.token]
                )
                ?? 0
            guard count < limit else { throw StoreError.limit("topics per token") }
            try db.executeCached(
                sql: """
                    INSERT INTO topic_subscriptions (token, topic, project_id, created_at, android_id)
                    SELECT ?, ?, ?, ?, android_id FROM registrations WHERE token = ?
                    """,
                arguments: [
                    subscription.token, subscription.topic, subscription.projectID, subscription.createdAt.milliseconds,
                    subscription.token,
                ])
            guard db.changesCount > 0 else { throw StoreError.notFound("token") }
            return true
        }
    }

    public func unsubscribe(token: String, topic: String) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "DELETE FROM topic_subscriptions WHERE token = ? AND topic = ?", arguments: [token, topic])
            return db.changesCount > 0
        }
    }

    public func subscriptions(token: String) async throws -> [TopicSubscription] {
        try read { db in
            try Row.fetchAll(
                cached: db, sql: "SELECT * FROM topic_subscriptions WHERE token = ? ORDER BY topic", arguments: [token]
            ).map { row in
                TopicSubscription(
                    projectID: row["project_id"], token: row["token"], topic: row["topic"],
                    createdAt: Timestamp(milliseconds: row["created_at"]))
            }
        }
    }

    public func topics(ofTokens tokens: [String]) async throws -> [String: Set<String>] {
        guard !tokens.isEmpty else { return [:] }
        return try read { db in
            var result: [String: Set<String>] = [:]
            try Self.forEachRow(db, "SELECT token, topic FROM topic_subscriptions WHERE token IN (?)", of: tokens) {
                row in
                result[row.text(0), default: []].insert(row.text(1))
            }
            return result
        }
    }

    public func audience(projectID: String, topics: [String]?, after cursor: String, limit: Int) async throws
        -> [Registration]
    {
        if topics?.isEmpty == true { return [] }
        let (order, start) = Self.pageOrder(after: cursor)
        let marks = Array(repeating: "?", count: start.count).joined(separator: ", ")
        func after(_ table: String) -> String {
            start.isEmpty ? "" : "AND (\(Self.qualified(order, by: table))) > (\(marks))"
        }
        return try read { db in
            if let topics {
                // A page holds `limit` live registrations unless it is the last: the engine
                // ends a job at a short page, so unregistered app instances, whose
                // subscriptions stay, are passed over before the limit, not after it. Each
                // topic (a condition names at most five) gives its next `limit` straight off
                // the subscription index in page order; the page is the first `limit` of their
                // union, so no page sorts every subscription after the cursor.
                let arm = """
                    SELECT \(Self.qualified(Self.registrationColumns, by: "registrations")) FROM topic_subscriptions
                    JOIN registrations ON registrations.token = topic_subscriptions.token
                    WHERE topic_subscriptions.project_id = ? AND topic_subscriptions.topic = ?
                    \(after("topic_subscriptions")) AND registrations.deleted_at IS NULL
                    ORDER BY \(Self.qualified(order, by: "topic_subscriptions")) LIMIT ?
                    """
                let sql =
                    topics.count == 1
                    ? arm
                    : Array(repeating: "SELECT * FROM (\(arm))", count: topics.count).joined(separator: " UNION ")
                        + " ORDER BY \(order) LIMIT ?"
                var arguments = topics.flatMap { [projectID, $0] + start + [limit] }
                if topics.count > 1 { arguments.append(limit) }
                return try db.fetchAllCached(sql: sql, arguments: StatementArguments(arguments), Self.registration)
            }
            return try db.fetchAllCached(
                sql: """
                    SELECT \(Self.registrationColumns) FROM registrations WHERE project_id = ? AND kind = 'app' AND deleted_at IS NULL
                    \(after("registrations")) ORDER BY \(order) LIMIT ?
                    """,
                arguments: StatementArguments([projectID] + start + [limit]), Self.registration)
        }
    }

    /// The columns a page of an audience is ordered by after `cursor`, and the cursor's values
    /// for them (none at the start).
    static func pageOrder(after cursor: String) -> (
        order: String, start: [any DatabaseValueConvertible & Sendable]
    ) {
        switch FanoutPosition(cursor: cursor) {
        case .start: ("android_id, token", [])
        case .after(let device, let token): ("android_id, token", [device, token])
        case .afterToken(let token): ("token", [token])
        }
    }

    public func audience(projectID: String, topics: [String]?, androidIDs: [UInt64]) async throws -> [Registration] {
        if topics?.isEmpty == true { return [] }
        return try read { db in
            var sql = """
                SELECT \(Self.registrationColumns) FROM registrations
                WHERE +project_id = ? AND kind = 'app' AND deleted_at IS NULL AND android_id IN (?)
                """
            // `+project_id` keeps SQLite on the device index: a page of devices is a few rows,
            // the project's registrations may be millions.
            if let topics {
                // Spelled without `IN (?)`, which `forEachRow` fills with the devices.
                let matches = Array(repeating: "topic = ?", count: topics.count).joined(separator: " OR ")
                sql += """
                     AND EXISTS (SELECT 1 FROM topic_subscriptions
                        WHERE topic_subscriptions.token = registrations.token AND (\(matches)))
                    """
            }
            var found: [Registration] = []
            try Self.forEachRow(
                db, sql, before: [projectID], of: androidIDs.map { Int64(bitPattern: $0) }, after: topics ?? []
            ) { found.append(Self.registration($0)) }
            return found.sorted { $0.token < $1.token }
        }
    }

    // MARK: Device groups

    public func createDeviceGroup(_ group: DeviceGroup) async throws {
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO device_groups (notification_key, project_id, name, members) VALUES (?, ?, ?, ?)",
                arguments: [
                    group.notificationKey, group.projectID, group.name, StoreCoding.encode(members: group.members),
                ])
        }
    }

    public func deviceGroup(projectID: String, name: String?, notificationKey: String?) async throws -> DeviceGroup? {
        try read { db in
            var sql = "SELECT * FROM device_groups WHERE project_id = ?"
            var arguments: [any DatabaseValueConvertible] = [projectID]
            if let name {
                sql += " AND name = ?"
                arguments.append(name)
            }
            if let notificationKey {
                sql += " AND notification_key = ?"
                arguments.append(notificationKey)
            }
            return try Row.fetchOne(cached: db, sql: sql + " LIMIT 1", arguments: StatementArguments(arguments)).map {
                row in
                DeviceGroup(
                    projectID: row["project_id"], name: row["name"], notificationKey: row["notification_key"],
                    members: StoreCoding.decodeMembers(row["members"]))
            }
        }
    }

    public func updateDeviceGroup(projectID: String, notificationKey: String, members: [String]) async throws {
        try await write { db in
            if members.isEmpty {
                try db.executeCached(
                    sql: "DELETE FROM device_groups WHERE project_id = ? AND notification_key = ?",
                    arguments: [projectID, notificationKey])
            } else {
                try db.executeCached(
                    sql: "UPDATE device_groups SET members = ? WHERE project_id = ? AND notification_key = ?",
                    arguments: [StoreCoding.encode(members: members), projectID, notificationKey])
            }
            guard db.changesCount > 0 else { throw StoreError.notFound("device group") }
        }
    }
}

/// A project's topics and device groups as the console lists them.
extension SQLiteStore {
    public func topicSizes(projectID: String, limit: Int, countingUpTo: Int) async throws
        -> [(topic: String, subscribers: Int)]
    {
        // The topics are found one index seek each, not by reading every subscription.
        try read { db in
            try db.fetchAllCached(
                sql: """
                    WITH RECURSIVE topics(topic) AS (
                        SELECT MIN(topic) FROM topic_subscriptions WHERE project_id = ?
                        UNION ALL
                        SELECT (SELECT MIN(topic) FROM topic_subscriptions WHERE project_id = ? AND topic > topics.topic)
                        FROM topics WHERE topics.topic IS NOT NULL)
                    SELECT topic, (SELECT COUNT(*) FROM (
                        SELECT 1 FROM topic_subscriptions WHERE project_id = ? AND topic = topics.topic LIMIT ?))
                    FROM topics WHERE topic IS NOT NULL LIMIT ?
                    """,
                arguments: [projectID, projectID, projectID, countingUpTo, limit]
            ) { row in (row.text(0), Int(row.int64(1))) }
        }
    }

    public func deviceGroups(projectID: String, limit: Int) async throws -> [DeviceGroup] {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT name, notification_key, members FROM device_groups WHERE project_id = ? ORDER BY name LIMIT ?
                    """,
                arguments: [projectID, limit]
            ) { row in
                DeviceGroup(
                    projectID: projectID, name: row.text(0), notificationKey: row.text(1),
                    members: StoreCoding.decodeMembers(row.text(2)))
            }
        }
    }

    public func deviceGroupCount(projectID: String, countingUpTo: Int) async throws -> Int {
        try read { db in
            try Int.fetchOne(
                db.cachedStatement(
                    sql: "SELECT COUNT(*) FROM (SELECT 1 FROM device_groups WHERE project_id = ? LIMIT ?)"),
                arguments: [projectID, countingUpTo]) ?? 0
        }
    }
}
