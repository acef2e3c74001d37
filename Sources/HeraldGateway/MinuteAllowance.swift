import HeraldCore

/// How many of something a connection may do in a clock minute: receipts, and
/// acknowledgements of ids its session does not hold. A value, so the session that keeps
/// one stays a value.
struct MinuteAllowance: Sendable {
    /// How many a minute allows.
    let limit: Int
    private var minute: Int64 = 0
    private var used = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts `count` in the minute of `now`; false once the minute's total passes `limit`.
    mutating func admit(_ count: Int = 1, now: Timestamp) -> Bool {
        let current = now.milliseconds / 60_000
        if current != minute {
            minute = current
            used = 0
        }
        used += count
        return used <= limit
    }
}
