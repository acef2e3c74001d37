/// How many times a project was answered with one error in one hour: its code
/// (`QUOTA_EXCEEDED`, `UNAVAILABLE`, `INVALID_ARGUMENT`, …) and HTTP status.
public struct ErrorCount: Sendable, Hashable {
    public var projectID: String
    /// The start of the hour, UTC.
    public var hour: Timestamp
    public var code: String
    public var status: Int
    public var count: Int

    public init(projectID: String, hour: Timestamp, code: String, status: Int, count: Int) {
        self.projectID = projectID
        self.hour = hour
        self.code = code
        self.status = status
        self.count = count
    }

    /// The start of the hour `time` falls in.
    public static func hour(of time: Timestamp) -> Timestamp {
        Timestamp(milliseconds: time.milliseconds - ((time.milliseconds % 3_600_000) + 3_600_000) % 3_600_000)
    }
}
