extension Timestamp {
    /// This moment as RFC 3339 in UTC with milliseconds: `2026-11-28T13:05:09.042Z`.
    public var rfc3339: String {
        let millisecondOfDay = ((milliseconds % 86_400_000) + 86_400_000) % 86_400_000
        let seconds = millisecondOfDay / 1000
        func padded(_ value: Int64, _ digits: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return CalendarDay(self).description + "T" + padded(seconds / 3600, 2) + ":" + padded(seconds / 60 % 60, 2)
            + ":" + padded(seconds % 60, 2) + "." + padded(millisecondOfDay % 1000, 3) + "Z"
    }
}
