import HeraldCore
import Testing

/// UTC days: a moment's day, and the day's number since 1970 back again.
@Suite struct CalendarDayTests {
    @Test func aDaysNumberSince1970IsTheInverseOfTheDayOfAMoment() {
        for days: Int64 in [-800_000, -1, 0, 1, 59, 60, 365, 10_957, 11_016, 20_784, 2_932_896] {
            let day = CalendarDay(Timestamp(milliseconds: days * 86_400_000 + 43_200_000))
            #expect(day.daysSince1970 == days, "\(day)")
        }
        #expect(CalendarDay("2026-11-27")?.daysSince1970 == 20_784)
        #expect(CalendarDay("2000-02-29")?.daysSince1970 == 11_016)
    }
}
