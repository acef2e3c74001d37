public import HeraldCore
import PostgresNIO

/// The recipients of one-to-one sends (`RegistrationStore.recipient`): a registration with
/// its device's last connection and, when asked, its recent messages, in one statement.
extension PostgresStore {
    public func recipient(token: String, countingRecentBefore now: Timestamp?) async throws -> Recipient? {
        var binds = PostgresBindings()
        let token = binds.place(token)
        return try await recipient(
            where: "token = \(token)",
            targets: "ARRAY[\(token), (SELECT installation_id FROM registrations WHERE token = \(token))]",
            countingRecentBefore: now, binds: &binds)
    }

    public func recipient(installationID: String, projectID: String, countingRecentBefore now: Timestamp?)
        async throws -> Recipient?
    {
        var binds = PostgresBindings()
        let (project, installation) = (binds.place(projectID), binds.place(installationID))
        let newest = """
            project_id = \(project) AND installation_id = \(installation) ORDER BY created_at DESC, token DESC LIMIT 1
            """
        return try await recipient(
            where: newest, targets: "ARRAY[\(installation), (SELECT token FROM registrations WHERE \(newest))]",
            countingRecentBefore: now, binds: &binds)
    }

    /// The registration `condition` selects, its device's `last_connected_at` and, given
    /// `now`, the counts `recentMessages(to:minuteSince:hourSince:)` answers for `targets`
    /// (its token and installation id, as an array the statement computes once: a count
    /// correlated with the registration's row was planned as a scan of every message).
    private func recipient(
        where condition: String, targets: String, countingRecentBefore now: Timestamp?,
        binds: inout PostgresBindings
    ) async throws -> Recipient? {
        var recent = ""
        if let now {
            let windows = RecentMessages.windows(before: now)
            let counting = Self.recentCounting(
                targets: targets, minuteSince: windows.minute, hourSince: windows.hour, &binds)
            recent = ", (\(counting)) AS recent"
        }
        let sql = """
            SELECT \(Self.registrationColumns),
                (SELECT last_connected_at FROM devices WHERE devices.android_id = registrations.android_id)
                \(now == nil ? "" : ", recent.*")
            FROM registrations\(recent) WHERE \(condition)
            """
        let found = try await rows(PostgresQuery(unsafeSQL: sql, binds: binds), prepared: true)
        guard let row = found.first else { return nil }
        let columns = row.makeRandomAccess()
        let lastConnected = try columns[Self.registrationColumnCount].decode(Int64?.self)
        return Recipient(
            registration: try Self.registration(row),
            lastConnectedAt: .some(lastConnected.map(Timestamp.init(milliseconds:))),
            recent: now == nil ? nil : try Self.recentMessages(columns, from: Self.registrationColumnCount + 1))
    }

    static let registrationColumnCount = registrationColumns.split(separator: ",").count

    /// A statement counting the messages stored for `targets` (an SQL array of texts) since
    /// `hourSince` and since `minuteSince`, with the oldest of each (SEMANTICS T6).
    static func recentCounting(
        targets: String, minuteSince: Timestamp, hourSince: Timestamp, _ binds: inout PostgresBindings
    ) -> String {
        let minute = binds.place(minuteSince.milliseconds)
        return """
            SELECT COUNT(*) FILTER (WHERE created_at > \(minute)), MIN(created_at) FILTER (WHERE created_at > \(minute)),
                COUNT(*), MIN(created_at)
            FROM messages WHERE target = ANY(\(targets)) AND created_at > \(binds.place(hourSince.milliseconds))
            """
    }

    /// The counts of `recentCounting`, from its first column at `index`.
    static func recentMessages(_ columns: PostgresRandomAccessRow, from index: Int) throws -> RecentMessages {
        let oldestInMinute = try columns[index + 1].decode(Int64?.self)
        let oldestInHour = try columns[index + 3].decode(Int64?.self)
        return RecentMessages(
            minute: try columns[index].decode(Int.self), hour: try columns[index + 2].decode(Int.self),
            oldestInMinute: oldestInMinute.map(Timestamp.init(milliseconds:)),
            oldestInHour: oldestInHour.map(Timestamp.init(milliseconds:)))
    }
}
