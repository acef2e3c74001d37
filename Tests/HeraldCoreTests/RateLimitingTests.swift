import HeraldCore
import Testing

/// The counting behind SEMANTICS T1, T2, T4 and T6, with explicit timestamps.
@Suite struct RateLimitingTests {
    @Test func T1_aSlidingWindowForgetsEventsSteadilyOverTheirBucketsLengthAWindowAfterIt() {
        var window = SlidingWindow(windowMilliseconds: 60_000, buckets: 600)
        let start = Timestamp(milliseconds: 1_000_030_050)
        window.add(5, at: start)
        window.add(5, at: start.adding(milliseconds: 30_000))
        let value1 = window.count(at: start.adding(milliseconds: 59_999))
        #expect(value1 == 10)
        // The first five came in the bucket from start - 50 ms to start + 50 ms. They leave
        // over the 100 ms a window after it, one each 20 ms, not at a clock minute: one has
        // left 20 ms in.
        let value2 = window.wait(toFit: 1, limit: 10, at: start.adding(milliseconds: 59_999))
        #expect(value2 == 71)
        #expect(window.count(at: start.adding(milliseconds: 60_050)) == 10)
        // Halfway, 2.5 of them are counted still: rounded up, three.
        #expect(window.count(at: start.adding(milliseconds: 60_100)) == 8)
        let value3 = window.count(at: start.adding(milliseconds: 60_150))
        #expect(value3 == 5)
        let value4 = window.wait(toFit: 5, limit: 10, at: start.adding(milliseconds: 60_150))
        #expect(value4 == 0)
        let value5 = window.count(at: start.adding(milliseconds: 200_000))
        #expect(value5 == 0)
    }

    @Test func T1_takingBackEventsFreesTheirRoom() {
        var window = SlidingWindow(windowMilliseconds: 60_000, buckets: 600)
        let now = Timestamp(seconds: 10)
        window.add(3, at: now)
        window.add(-1, at: now)
        let value6 = window.count(at: now)
        #expect(value6 == 2)
        let value7 = window.wait(toFit: 8, limit: 10, at: now)
        #expect(value7 == 0)
        let value8 = window.wait(toFit: 11, limit: 10, at: now)
        #expect(value8 > 60_000)
    }

    @Test func T1_aWindowWaitsForItsOwnBucketsAndCoarserOnesOfOtherNodesEachLeavingInTurn() {
        var mine = SlidingWindow(windowMilliseconds: 60_000, buckets: 6_000)
        var theirs: SlidingWindow? = SlidingWindow(windowMilliseconds: 60_000, buckets: 600)
        mine.add(5, at: Timestamp(milliseconds: 1_000_005))
        theirs!.add(5, at: Timestamp(milliseconds: 1_000_000))
        let now = Timestamp(milliseconds: 1_059_000)
        // This node's five leave over 10 ms from 1_060_010 (one each 2 ms), the others'
        // over 100 ms from 1_060_100 (one each 20 ms).
        #expect(mine.wait(toFit: 1, limit: 10, besides: &theirs, at: now) == 1_012)
        #expect(mine.wait(toFit: 6, limit: 10, besides: &theirs, at: now) == 1_120)
        #expect(mine.wait(toFit: 11, limit: 10, besides: &theirs, at: now) > 60_000)
        #expect(mine.wait(toFit: 1, limit: 11, besides: &theirs, at: now) == 0)
        // Either one alone.
        var none: SlidingWindow? = nil
        #expect(mine.wait(toFit: 5, limit: 10, besides: &none, at: now) == 0)
        #expect(mine.wait(toFit: 6, limit: 10, besides: &none, at: now) == 1_012)
        var onlyTheirs = SlidingWindow(windowMilliseconds: 60_000, buckets: 6_000)
        #expect(onlyTheirs.wait(toFit: 6, limit: 10, besides: &theirs, at: now) == 1_120)
        // Both leaving at once from 1_060_100, at 0.5 and 0.05 a millisecond: three gone in 5.5 ms.
        var both = SlidingWindow(windowMilliseconds: 60_000, buckets: 6_000)
        both.add(5, at: Timestamp(milliseconds: 1_000_095))
        #expect(both.wait(toFit: 3, limit: 10, besides: &theirs, at: now) == 1_106)
        // Once both have left, everything fits.
        #expect(mine.wait(toFit: 10, limit: 10, besides: &theirs, at: Timestamp(milliseconds: 1_060_200)) == 0)
    }

    @Test func T1_aWindowTellsItsCountsInCoarserPeriods() {
        var window = SlidingWindow(windowMilliseconds: 60_000, buckets: 6_000)
        window.add(2, at: Timestamp(milliseconds: 1_000_005))
        window.add(3, at: Timestamp(milliseconds: 1_000_095))
        window.add(4, at: Timestamp(milliseconds: 1_000_105))
        let now = Timestamp(milliseconds: 1_000_200)
        #expect(window.counts(at: now).map(\.count) == [2, 3, 4])
        let periods = window.counts(at: now, per: 100)
        #expect(periods.map(\.start) == [1_000_000, 1_000_100])
        #expect(periods.map(\.count) == [5, 4])
        // Only what is still inside the window.
        #expect(window.counts(at: Timestamp(milliseconds: 1_060_020), per: 100).map(\.count) == [3, 4])
    }

    @Test func T6_anHourWindowCountsInMinuteBuckets() {
        var hour = SlidingWindow(windowMilliseconds: 3_600_000, buckets: 60)
        let start = Timestamp(seconds: 7_200)
        hour.add(1, at: start)
        let value9 = hour.count(at: start.adding(seconds: 3_599))
        #expect(value9 == 1)
        // Leaving over the minute after the hour past its minute.
        #expect(hour.count(at: start.adding(seconds: 3_690)) == 1)
        let value10 = hour.count(at: start.adding(seconds: 3_720))
        #expect(value10 == 0)
    }

    @Test func T4_aBurstThenOneTokenPerRefillPeriod() {
        let start = Timestamp(seconds: 1_000)
        var bucket = TokenBucket(capacity: 20, now: start)
        for _ in 0..<20 {
            let taken = bucket.take(capacity: 20, refillMilliseconds: 180_000, now: start)
            #expect(taken)
        }
        let value12 = bucket.take(capacity: 20, refillMilliseconds: 180_000, now: start.adding(seconds: 179))
        #expect(!value12)
        let value13 = bucket.nextToken(capacity: 20, refillMilliseconds: 180_000, now: start)
        #expect(value13 == start.adding(seconds: 180))
        let value14 = bucket.take(capacity: 20, refillMilliseconds: 180_000, now: start.adding(seconds: 180))
        #expect(value14)
        let value15 = bucket.take(capacity: 20, refillMilliseconds: 180_000, now: start.adding(seconds: 300))
        #expect(!value15)
        // Refill continues from the last token, not from the last attempt.
        let value16 = bucket.take(capacity: 20, refillMilliseconds: 180_000, now: start.adding(seconds: 360))
        #expect(value16)
        // A long pause refills at most the burst.
        let later = start.adding(seconds: 100_000)
        for _ in 0..<20 {
            let taken = bucket.take(capacity: 20, refillMilliseconds: 180_000, now: later)
            #expect(taken)
        }
        let value18 = bucket.take(capacity: 20, refillMilliseconds: 180_000, now: later)
        #expect(!value18)
    }
}
