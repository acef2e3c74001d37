/// The outcomes SEMANTICS L7 counts, per project, day, app and analytics label.
public enum DeliveryCounter: String, Sendable, Hashable, CaseIterable, Codable {
    case accepted
    case delivered
    case collapsed
    case expired
    case droppedTooManyPending = "dropped_too_many_pending"
    case droppedDeviceInactive = "dropped_device_inactive"
    /// Refused for good by the push service it was handed to (SEMANTICS A3, R4, W3).
    case droppedRefused = "dropped_refused"
    case unregistered
    case throttled
    case opened
    case impressions
}

/// Where a count belongs: project, UTC day, app and analytics label ("" when unlabelled).
public struct DeliveryStatKey: Sendable, Hashable {
    public var projectID: String
    /// `YYYY-MM-DD`, UTC.
    public var day: String
    public var appID: String
    public var label: String

    public init(projectID: String, day: String, appID: String, label: String) {
        self.projectID = projectID
        self.day = day
        self.appID = appID
        self.label = label
    }

    /// The key for something that happened at `time`.
    public init(projectID: String, at time: Timestamp, appID: String, label: String?) {
        self.init(projectID: projectID, day: CalendarDay(time).description, appID: appID, label: label ?? "")
    }
}

/// An amount to add to one counter, and the message fact it counts, if it is one.
public struct DeliveryStat: Sendable, Hashable {
    public var key: DeliveryStatKey
    public var counter: DeliveryCounter
    public var amount: Int
    /// The message and app instance it is about; nil for a count of no message's.
    public var fact: DeliveryFact?

    public init(_ key: DeliveryStatKey, _ counter: DeliveryCounter, _ amount: Int = 1, fact: DeliveryFact? = nil) {
        self.key = key
        self.counter = counter
        self.amount = amount
        self.fact = fact
    }
}

/// One row of a delivery report: every counter of one key, and how many of its messages
/// still wait in device queues.
public struct DeliveryReportRow: Sendable, Equatable {
    public var key: DeliveryStatKey
    public var counts: [DeliveryCounter: Int]
    public var pending: Int

    public init(key: DeliveryStatKey, counts: [DeliveryCounter: Int], pending: Int) {
        self.key = key
        self.counts = counts
        self.pending = pending
    }

    public subscript(counter: DeliveryCounter) -> Int { counts[counter] ?? 0 }
}

/// A calendar day in UTC.
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    /// The UTC day a moment falls on.
    public init(_ time: Timestamp) {
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
        let days = Int((time.milliseconds >= 0 ? time.milliseconds : time.milliseconds - 86_399_999) / 86_400_000)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days from 1970-01-01 to this day (the inverse of `init(_:)`).
    public var daysSince1970: Int64 {
        let year = Int64(month <= 2 ? self.year - 1 : self.year)
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let monthPrime = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthPrime + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Parses `YYYY-MM-DD`.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else {
            return nil
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`, written as bytes: every message a fanout plans is counted under its day.
    public var description: String {
        guard (0...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else {
            return "\(year)-\(month)-\(day)"
        }
        return String(unsafeUninitializedCapacity: 10) { bytes in
            func put(_ value: Int, digits: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                    bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, digits: 4, at: 0)
            bytes[4] = UInt8(ascii: "-")
            put(month, digits: 2, at: 5)
            bytes[7] = UInt8(ascii: "-")
            put(day, digits: 2, at: 8)
            return 10
        }
    }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}
