public import HeraldCore

/// The errors each project was answered with per hour (`StatsStore`).
extension InMemoryStore {
    public func recordErrors(_ counts: [ErrorCount]) {
        for count in counts {
            let key = ErrorCountKey(
                projectID: count.projectID, hour: count.hour, code: count.code, status: count.status)
            errorCountsByKey[key, default: 0] += count.count
        }
    }

    public func errorCounts(projectID: String, since: Timestamp) -> [ErrorCount] {
        errorCountsByKey.filter { $0.key.projectID == projectID && $0.key.hour >= since }
            .map {
                ErrorCount(
                    projectID: $0.key.projectID, hour: $0.key.hour, code: $0.key.code, status: $0.key.status,
                    count: $0.value)
            }
            .sorted { ($0.hour, $0.code) < ($1.hour, $1.code) }
    }

    public func deleteErrorCounts(before: Timestamp, limit: Int) -> Int {
        let old = errorCountsByKey.keys.filter { $0.hour < before }.prefix(limit)
        for key in old { errorCountsByKey[key] = nil }
        return old.count
    }
}

/// Where an error count belongs.
struct ErrorCountKey: Hashable {
    var projectID: String
    var hour: Timestamp
    var code: String
    var status: Int
}
