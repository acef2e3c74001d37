import Foundation
public import HeraldCore
import PostgresNIO

/// What lets several nodes share the store (`Cluster`).
extension PostgresStore {
    // MARK: Cluster

    public func heartbeat(now: Timestamp, deadAfterMilliseconds: Int64) async throws -> NodeHeartbeat {
        // One statement a beat. A row the insertion made has xmax 0; one it updated carries
        // its transaction there. The nodes are read as they were before it, which names no
        // other node differently.
        guard
            let row = try await rows(
                """
                WITH beat AS (
                    INSERT INTO nodes (id, started_at, heartbeat_at, address)
                    VALUES (\(nodeID), \(now.milliseconds), \(now.milliseconds), \(nodeAddress))
                    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, address = excluded.address
                    RETURNING xmax = 0 AS forgotten)
                SELECT (SELECT forgotten FROM beat),
                    ARRAY(
                        SELECT id FROM nodes
                        WHERE id <> \(nodeID) AND heartbeat_at < \(now.milliseconds - deadAfterMilliseconds)
                        ORDER BY id)
                """
            ).first
        else { return NodeHeartbeat(staleNodes: [], wasForgotten: false) }
        let (wasForgotten, stale) = try row.decode((Bool?, [String]).self)
        return NodeHeartbeat(staleNodes: stale, wasForgotten: wasForgotten ?? false)
    }

    public func node(_ id: String) async throws -> NodeRecord? {
        try await rows("SELECT address, heartbeat_at FROM nodes WHERE id = \(id)").first.map { row in
            let (address, heartbeat) = try row.decode((String, Int64).self)
            return NodeRecord(id: id, address: address, heartbeatAt: Timestamp(milliseconds: heartbeat))
        }
    }

    public func leave() async throws {
        try await run("UPDATE nodes SET heartbeat_at = 0 WHERE id = \(nodeID)")
    }

    public func releaseNode(_ node: String) async throws -> Int {
        try await transaction { connection in
            try await self.run(
                "UPDATE devices SET holder_node = NULL WHERE holder_node = \(node)", on: connection)
            try await self.run("DELETE FROM quota_counts WHERE node_id = \(node)", on: connection)
            let adopted = try await self.count(
                """
                UPDATE fanouts SET owner_node = \(self.nodeID)
                WHERE state <> 'done' AND (owner_node = \(node) OR owner_node IS NULL) RETURNING 1
                """, on: connection)
            if node != self.nodeID { try await self.run("DELETE FROM nodes WHERE id = \(node)", on: connection) }
            return adopted
        }
    }

    public func claimConnections(androidIDs: [UInt64]) async throws -> Int {
        guard !androidIDs.isEmpty else { return 0 }
        return try await count(
            """
            UPDATE devices SET holder_node = \(nodeID)
            WHERE android_id = ANY(\(androidIDs.map { Int64(bitPattern: $0) })) AND holder_node IS NULL RETURNING 1
            """)
    }

    public func releaseConnection(androidID: UInt64) async throws {
        try await run(
            """
            UPDATE devices SET holder_node = NULL
            WHERE android_id = \(Int64(bitPattern: androidID)) AND holder_node = \(nodeID)
            """)
    }

    public func remoteHolders(androidIDs: [UInt64]) async throws -> [UInt64: String] {
        guard !androidIDs.isEmpty else { return [:] }
        var holders: [UInt64: String] = [:]
        for row in try await rows(
            """
            SELECT android_id, holder_node FROM devices
            WHERE android_id = ANY(\(androidIDs.map { Int64(bitPattern: $0) })) AND holder_node IS NOT NULL
                AND holder_node <> \(nodeID)
            """, prepared: true)
        {
            let (id, node) = try row.decode((Int64, String).self)
            holders[UInt64(bitPattern: id)] = node
        }
        return holders
    }

    public func devicesHeldElsewhere() async throws -> [UInt64] {
        try await rows(
            """
            SELECT android_id FROM devices WHERE holder_node IS NOT NULL AND holder_node <> \(nodeID)
            ORDER BY android_id
            """
        ).map { UInt64(bitPattern: try $0.decode(Int64.self)) }
    }

    /// The channel a node listens on; node ids are free text, so the channel is derived.
    static func channel(of node: String) -> String {
        "herald_node_"
            + node.unicodeScalars.map { scalar in
                CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII ? String(scalar) : "_"
            }.joined().lowercased()
    }

    /// At most this many device ids per notification (PostgreSQL caps a payload at 8,000 bytes).
    static let devicesPerSignal = 300

    public func signal(node: String, androidIDs: [UInt64]) async throws {
        let channel = Self.channel(of: node)
        for start in stride(from: 0, to: androidIDs.count, by: Self.devicesPerSignal) {
            let payload = androidIDs[start..<min(start + Self.devicesPerSignal, androidIDs.count)]
                .map { String($0, radix: 36) }.joined(separator: ",")
            try await run("SELECT pg_notify(\(channel), \(payload))", prepared: true)
        }
    }

    /// Listens on the primary until the connection is lost (a failover among them); the
    /// caller listens again, on the primary then known.
    public func listenForSignals(
        listening: @escaping @Sendable () async -> Void, _ receive: @escaping @Sendable ([UInt64]) async -> Void
    ) async throws {
        let index = try primaryIndex()
        do {
            try await withLeasedConnection(host: index, statement: nil) { connection in
                try await connection.listen(on: Self.channel(of: self.nodeID)) { notifications in
                    // `LISTEN` has completed: later signals are heard.
                    await listening()
                    for try await notification in notifications {
                        await receive(notification.payload.split(separator: ",").compactMap { UInt64($0, radix: 36) })
                    }
                }
            }
        } catch {
            throw failure(error, on: index)
        }
    }

    public func recentMessages(to targets: [String], minuteSince: Timestamp, hourSince: Timestamp) async throws
        -> RecentMessages
    {
        var binds = PostgresBindings()
        let sql = Self.recentCounting(
            targets: binds.place(targets), minuteSince: minuteSince, hourSince: hourSince, &binds)
        guard let row = try await rows(PostgresQuery(unsafeSQL: sql, binds: binds)).first else {
            return RecentMessages(minute: 0, hour: 0, oldestInMinute: nil, oldestInHour: nil)
        }
        return try Self.recentMessages(row.makeRandomAccess(), from: 0)
    }

    public func exchangeQuotaCounts(quota: String, mine: [QuotaCount], since: Timestamp) async throws -> [QuotaCount] {
        try await transaction { connection in
            if !mine.isEmpty {
                // The other nodes' exchanges wake, so that a node that accepted nothing for a
                // while knows this one's counts before it does.
                CreatedWork.add(.quotas)
                try await self.run(
                    """
                    INSERT INTO quota_counts (quota, project_id, node_id, bucket, count)
                    SELECT \(quota), project_id, \(self.nodeID), bucket, count
                    FROM UNNEST(\(mine.map(\.projectID))::text[], \(mine.map(\.bucket))::bigint[],
                        \(mine.map { Int64($0.count) })::bigint[]) AS rows(project_id, bucket, count)
                    ON CONFLICT (quota, project_id, node_id, bucket) DO UPDATE SET count = excluded.count
                    """, on: connection)
            }
            try await self.run(
                "DELETE FROM quota_counts WHERE quota = \(quota) AND bucket < \(since.milliseconds)", on: connection)
            return try await self.rows(
                """
                SELECT project_id, bucket, SUM(count)::bigint FROM quota_counts
                WHERE quota = \(quota) AND node_id <> \(self.nodeID) AND bucket >= \(since.milliseconds)
                GROUP BY project_id, bucket
                """, on: connection, prepared: true
            ).map { row in
                let (project, bucket, count) = try row.decode((String, Int64, Int).self)
                return QuotaCount(projectID: project, bucket: bucket, count: count)
            }
        }
    }
}
