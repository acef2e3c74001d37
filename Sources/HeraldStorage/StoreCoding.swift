import Foundation
import HeraldCore

/// How values are written to and read from a database column, and the assembly of read
/// rows into reports: the same for every SQL backend, so the backends agree.
enum StoreCoding {
    static func encode(_ settings: ProjectSettings) throws -> String {
        String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
    }

    static func decodeSettings(_ text: String) throws -> ProjectSettings {
        try JSONDecoder().decode(ProjectSettings.self, from: Data(text.utf8))
    }

    /// A fanout audience as its kind and value columns.
    static func encode(_ audience: FanoutJob.Audience) -> (kind: String, value: String) {
        switch audience {
        case .topic(let name): return ("topic", name)
        case .condition(let text): return ("condition", text)
        case .deviceGroup(let key): return ("group", key)
        }
    }

    static func decodeAudience(_ kind: String, _ value: String) -> FanoutJob.Audience? {
        switch kind {
        case "topic": return .topic(value)
        case "condition": return .condition(value)
        case "group": return .deviceGroup(notificationKey: value)
        default: return nil
        }
    }

    /// A fanout's first devices as one column: decimal ids, comma-separated.
    static func encode(devices: [UInt64]) -> String { devices.map(String.init).joined(separator: ",") }

    static func decodeDevices(_ text: String) -> [UInt64] { text.split(separator: ",").compactMap { UInt64($0) } }

    /// Device-group members as one column.
    static func encode(members: [String]) -> String { members.joined(separator: "\n") }

    static func decodeMembers(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// Counters summed per key and counter, leaving out zeros: what a backend adds in one
    /// statement per pair.
    static func totals(_ stats: [DeliveryStat]) -> [(key: DeliveryStatKey, counter: DeliveryCounter, amount: Int)] {
        var totals: [DeliveryStatKey: [DeliveryCounter: Int]] = [:]
        // Push messages to push channels belong to no project and are not counted.
        for stat in stats where !stat.key.projectID.isEmpty {
            totals[stat.key, default: [:]][stat.counter, default: 0] += stat.amount
        }
        return totals.flatMap { key, counters in
            counters.filter { $0.value != 0 }.map { (key, $0.key, $0.value) }
        }
    }

    /// One stored counter row of `delivery_stats`.
    struct CounterRow {
        var day: String
        var appID: String
        var label: String
        var counter: String
        var value: Int
    }

    /// The messages still queued of one day (days since 1970, UTC), app and label.
    struct PendingRow {
        var day: Int64
        var appID: String
        var label: String
        var count: Int
    }

    /// A delivery report from a project's counter rows and its still-queued messages, for
    /// days in `from...through`, ordered by day, app and label.
    static func report(
        projectID: String, counters: [CounterRow], queued: [PendingRow], from: CalendarDay, through: CalendarDay
    ) -> [DeliveryReportRow] {
        var counts: [DeliveryStatKey: [DeliveryCounter: Int]] = [:]
        for row in counters {
            let key = DeliveryStatKey(projectID: projectID, day: row.day, appID: row.appID, label: row.label)
            if let counter = DeliveryCounter(rawValue: row.counter) { counts[key, default: [:]][counter] = row.value }
        }
        var pending: [DeliveryStatKey: Int] = [:]
        for row in queued {
            let key = DeliveryStatKey(
                projectID: projectID, at: Timestamp(milliseconds: row.day * 86_400_000), appID: row.appID,
                label: row.label)
            guard let day = CalendarDay(key.day), from <= day, day <= through else { continue }
            pending[key, default: 0] += row.count
        }
        return Set(counts.keys).union(pending.keys)
            .sorted { ($0.day, $0.appID, $0.label) < ($1.day, $1.appID, $1.label) }
            .map { DeliveryReportRow(key: $0, counts: counts[$0] ?? [:], pending: pending[$0] ?? 0) }
    }
}

/// How a webhook's lists are kept in one column each.
extension StoreCoding {
    static func encode(types: Set<MessageEventType>) -> String { types.map(\.rawValue).sorted().joined(separator: ",") }

    static func decodeTypes(_ text: String) -> Set<MessageEventType> {
        Set(text.split(separator: ",").compactMap { MessageEventType(rawValue: String($0)) })
    }

    /// Errors, one a line (a line break within one becomes a space).
    static func encode(errors: [String]) -> String {
        errors.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n")
    }

    static func decodeErrors(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// When a webhook is next due to be claimed: at its next attempt, never while paused.
    static func readyAt(_ webhook: Webhook) -> Int64? {
        webhook.state == .active ? webhook.nextAttemptAt.milliseconds : nil
    }
}
