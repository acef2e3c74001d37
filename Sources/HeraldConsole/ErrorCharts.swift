import HeraldCore

/// A project's error counts as the quota page shows them: 429 and 503 answers per hour over
/// the last 48 hours, every error per day over the last 14 days, and the errors by code
/// over the last 24 hours and 14 days.
struct ErrorCharts {
    let counts: [ErrorCount]
    let thisHour: Timestamp

    var values: [String: Any] {
        let hours = (0..<48).reversed().map { thisHour.adding(seconds: -Int64($0) * 3600) }
        let hourNames = hours.map { UTCTime.format($0).dropLast(3).replacingOccurrences(of: "T", with: " ") }
        let perHour = { (status: Int) in
            hours.map { hour in
                self.counts.filter { $0.hour == hour && $0.status == status }.reduce(0) { $0 + $1.count }
            }
        }
        let days = (0..<14).reversed().map { CalendarDay(thisHour.adding(seconds: -Int64($0) * 86_400)).description }
        let perDay = days.map { day in
            counts.filter { CalendarDay($0.hour).description == day }.reduce(0) { $0 + $1.count }
        }
        let lastDay = thisHour.adding(seconds: -23 * 3600)
        var codes: [String: (status: Int, day: Int, fortnight: Int)] = [:]
        for count in counts {
            var entry = codes[count.code] ?? (count.status, 0, 0)
            entry.fortnight += count.count
            if count.hour >= lastDay { entry.day += count.count }
            codes[count.code] = entry
        }
        return [
            "errorCharts": [
                SVGBarChart(title: "429 answers per hour", periods: hourNames, values: perHour(429), color: "#b57600"),
                SVGBarChart(title: "503 answers per hour", periods: hourNames, values: perHour(503), color: "#c0392b"),
                SVGBarChart(title: "Errors per day", periods: days, values: perDay, color: "#6b4fbb"),
            ].map { ["svg": $0.svg] },
            "hasErrors": !codes.isEmpty,
            "errorCodes": codes.sorted { ($0.value.fortnight, $1.key) > ($1.value.fortnight, $0.key) }.map {
                [
                    "code": $0.key, "status": String($0.value.status), "day": String($0.value.day),
                    "fortnight": String($0.value.fortnight),
                ]
            },
        ]
    }
}
