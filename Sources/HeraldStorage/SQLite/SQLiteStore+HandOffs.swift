import GRDB
public import HeraldCore

/// Claims of hand-offs to APNs and FCM (`HandOffStore`).
extension SQLiteStore {
    public func claimHandOffs(limit: Int, now: Timestamp, until: Timestamp) async throws -> [HandOff] {
        // Looked for with a read first: a node with nothing to hand off, asking every tenth
        // of a second, never takes the writer's lock from the sends.
        let due = try read { db in
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT 1 FROM device_queue
                    WHERE android_id < \(Device.handOffIDs.upperBound) AND hand_off_at <= ? AND expires_at > ? LIMIT 1
                    """, arguments: [now.milliseconds, now.milliseconds])
        }
        guard due != nil else { return [] }
        return try await write { db in
            var claimed: [HandOff] = []
            var notHandOffs: [Int64] = []
            try db.forEachCached(
                sql: """
                    SELECT \(Self.queueColumns),
                        (SELECT apns FROM registrations WHERE registrations.token = device_queue.token)
                    FROM device_queue
                    WHERE android_id < \(Device.handOffIDs.upperBound) AND hand_off_at <= ? AND expires_at > ?
                    ORDER BY hand_off_at, sequence LIMIT ?
                    """,
                arguments: [now.milliseconds, now.milliseconds, limit]
            ) { row in
                let entry = Self.queued(row)
                if let destination = row.optionalText(15).flatMap(HandOff.destination(column:)) {
                    claimed.append(HandOff(entry: entry, destination: destination))
                } else {
                    notHandOffs.append(entry.sequence)
                }
            }
            try Self.setHandOff(of: claimed.map(\.entry.sequence), to: until.milliseconds, db)
            // A row of a device in the range that no hand-off registration names is never due.
            try Self.setHandOff(of: notHandOffs, to: Int64.max, db)
            return claimed
        }
    }

    public func deferHandOffs(_ sequences: [Int64], to at: Timestamp) async throws {
        guard !sequences.isEmpty else { return }
        try await write { db in try Self.setHandOff(of: sequences, to: at.milliseconds, db) }
    }

    static func setHandOff(of sequences: [Int64], to at: Int64, _ db: Database) throws {
        guard !sequences.isEmpty else { return }
        try forEachRow(
            db, "UPDATE device_queue SET hand_off_at = ? WHERE sequence IN (?) RETURNING sequence", before: [at],
            of: sequences
        ) { _ in }
    }

    public func registration(apns: APNsAddress, projectID: String) async throws -> Registration? {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.registrationColumns) FROM registrations
                    WHERE project_id = ? AND apns = ? AND deleted_at IS NULL ORDER BY created_at DESC LIMIT 1
                    """,
                arguments: [projectID, apns.tuple], Self.registration
            ).first
        }
    }
}
