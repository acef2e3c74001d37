public import HeraldCore
import PostgresNIO

/// Claims of hand-offs to APNs and FCM (`HandOffStore`): rows another node's claim holds locked
/// are skipped, so each entry is claimed by one node.
extension PostgresStore {
    public func claimHandOffs(limit: Int, now: Timestamp, until: Timestamp) async throws -> [HandOff] {
        let destinations: [Int64: HandOff.Destination] = try await transaction { connection in
            var destinations: [Int64: HandOff.Destination] = [:]
            for row in try await rows(
                """
                WITH due AS (
                    SELECT sequence AS due_sequence FROM device_queue
                    WHERE android_id < \(Int64(Device.handOffIDs.upperBound)) AND hand_off_at <= \(now.milliseconds)
                        AND expires_at > \(now.milliseconds)
                    ORDER BY hand_off_at, sequence LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                UPDATE device_queue SET hand_off_at = CASE
                    WHEN EXISTS (SELECT 1 FROM registrations
                        WHERE registrations.token = device_queue.token AND registrations.apns IS NOT NULL)
                    THEN \(until.milliseconds) ELSE \(Int64.max) END
                FROM due WHERE device_queue.sequence = due.due_sequence
                RETURNING device_queue.sequence,
                    (SELECT apns FROM registrations WHERE registrations.token = device_queue.token)
                """, on: connection, prepared: true)
            {
                let (sequence, apns) = try row.decode((Int64, String?).self)
                // A row of a device in the range that no hand-off registration names is never due.
                if let destination = apns.flatMap(HandOff.destination(column:)) { destinations[sequence] = destination }
            }
            return destinations
        }
        guard !destinations.isEmpty else { return [] }
        return try await rows(
            """
            SELECT \(unescaped: Self.queueColumns) FROM device_queue WHERE sequence = ANY(\(Array(destinations.keys)))
            ORDER BY sequence
            """
        ).compactMap { row in
            let entry = try Self.queued(row)
            return destinations[entry.sequence].map { HandOff(entry: entry, destination: $0) }
        }
    }

    public func deferHandOffs(_ sequences: [Int64], to at: Timestamp) async throws {
        guard !sequences.isEmpty else { return }
        try await run("UPDATE device_queue SET hand_off_at = \(at.milliseconds) WHERE sequence = ANY(\(sequences))")
    }

    public func registration(apns: APNsAddress, projectID: String) async throws -> Registration? {
        try await rows(
            """
            SELECT \(unescaped: Self.registrationColumns) FROM registrations
            WHERE project_id = \(projectID) AND apns = \(apns.tuple) AND deleted_at IS NULL
            ORDER BY created_at DESC LIMIT 1
            """
        ).first.map(Self.registration)
    }
}
