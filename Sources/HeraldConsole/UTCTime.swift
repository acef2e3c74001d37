import Foundation
import HeraldCore

/// Times as the console shows and reads them: `YYYY-MM-DDTHH:MM[:SS]` in UTC, the value of
/// an `<input type="datetime-local">`.
enum UTCTime {
    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter
    }

    /// The moment a form's time names, if it names one.
    static func parse(_ text: String) -> Timestamp? {
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm"] {
            if let date = formatter(format).date(from: text) {
                return Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
            }
        }
        return nil
    }

    /// `YYYY-MM-DDTHH:MM:SS`.
    static func format(_ time: Timestamp) -> String {
        formatter("yyyy-MM-dd'T'HH:mm:ss").string(
            from: Date(timeIntervalSince1970: Double(time.milliseconds) / 1000))
    }

    /// `YYYY-MM-DD HH:MM:SS UTC`, for people.
    static func shown(_ time: Timestamp) -> String {
        format(time).replacingOccurrences(of: "T", with: " ") + " UTC"
    }
}
