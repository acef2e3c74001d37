/// `google.protobuf.Duration` in its JSON form: seconds with an optional fraction and an `s`.
public enum ProtoDuration {
    /// The whole seconds of a duration string (the fraction is rounded down), or nil when
    /// the string is not a duration. Negative durations parse as negative seconds.
    public static func parseSeconds(_ text: String) -> Int64? {
        // Read as UTF-8 bytes: every valid character is ASCII, and this runs for every TTL sent.
        var utf8 = text.utf8[...]
        guard utf8.popLast() == UInt8(ascii: "s") else { return nil }
        let negative = utf8.first == UInt8(ascii: "-")
        if negative { utf8 = utf8.dropFirst() }
        var seconds: Int64 = 0
        var wholeDigits = 0
        while let byte = utf8.first, byte != UInt8(ascii: ".") {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), wholeDigits < 12 else { return nil }
            seconds = seconds * 10 + Int64(byte - UInt8(ascii: "0"))
            wholeDigits += 1
            utf8 = utf8.dropFirst()
        }
        guard wholeDigits > 0 else { return nil }
        var hasFraction = false
        if utf8.popFirst() != nil {
            // After the point: 1 to 9 digits.
            guard (1...9).contains(utf8.count),
                utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return nil }
            hasFraction = utf8.contains { $0 != UInt8(ascii: "0") }
        }
        // Rounded down: -0.5s is -1 second.
        return negative ? -seconds - (hasFraction ? 1 : 0) : seconds
    }

    /// The canonical string for whole seconds, such as `"3600s"`.
    public static func format(seconds: Int64) -> String { "\(seconds)s" }
}

/// RFC 3339 timestamps as `google.protobuf.Timestamp` accepts them.
public enum RFC3339 {
    /// A timestamp as `YYYY-MM-DDThh:mm:ss.sssZ`.
    public static func format(_ time: Timestamp) -> String {
        let day = CalendarDay(time)
        let milliseconds = ((time.milliseconds % 86_400_000) + 86_400_000) % 86_400_000
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(day)T\(pad(milliseconds / 3_600_000, 2)):\(pad(milliseconds / 60_000 % 60, 2)):"
            + "\(pad(milliseconds / 1000 % 60, 2)).\(pad(milliseconds % 1000, 3))Z"
    }

    /// Whether the text is `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for i in range {
                guard bytes[i] >= 48, bytes[i] <= 57 else { return nil }
                value = value * 10 + Int(bytes[i] - 48)
            }
            return value
        }
        guard bytes.count >= 20, let _ = digits(0..<4), bytes[4] == UInt8(ascii: "-"),
            let month = digits(5..<7), bytes[7] == UInt8(ascii: "-"), let day = digits(8..<10),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            let hour = digits(11..<13), bytes[13] == UInt8(ascii: ":"), let minute = digits(14..<16),
            bytes[16] == UInt8(ascii: ":"), let second = digits(17..<19)
        else { return false }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else {
            return false
        }
        var i = 19
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            guard i > start, i - start <= 9 else { return false }
        }
        guard i < bytes.count else { return false }
        if bytes[i] == UInt8(ascii: "Z") || bytes[i] == UInt8(ascii: "z") { return i + 1 == bytes.count }
        guard bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-"), i + 6 == bytes.count,
            let offsetHour = digits(i + 1..<i + 3), bytes[i + 3] == UInt8(ascii: ":"),
            let offsetMinute = digits(i + 4..<i + 6)
        else { return false }
        return offsetHour < 24 && offsetMinute < 60
    }
}
