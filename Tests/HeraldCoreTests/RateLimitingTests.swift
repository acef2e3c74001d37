import HeraldCore
import Testing

/// The counting behind SEMANTICS T1, T2, T4 and T6, with explicit timestamps.
@Suite struct RateLimitingTests {
    @Test func T1_aSlidingWindowForgetsEventsOneWindowAfterTheirBucket() {
        var window = SlidingWindow(windowMilliseconds: 60_000, buckets: 600)
        let start = Timestamp(milliseconds: 1_000_030_050)
        window.add(5, at: start)
        window.add(5, at: start.adding(milliseconds: 30_000))
        let value1 = window.count(at: start.adding(milliseconds: 59_999))
        #expect(value1 == 10)
        let value2 = window.wait(toFit: 1, limit: 10, at: start.adding(milliseconds: 59_999))
        #expect(value2 == 51)
        // The first five leave at the end of the bucket one window later, not at a clock minute.
        let value3 = window.count(at: start.adding(milliseconds: 60_050))
        #expect(value3 == 5)
        let value4 = window.wait(toFit: 5, limit: 10, at: start.adding(milliseconds: 60_050))
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

    @Test func T6_anHourWindowCountsInMinuteBuckets() {
        var hour = SlidingWindow(windowMilliseconds: 3_600_000, buckets: 60)
        let start = Timestamp(seconds: 7_200)
        hour.add(1, at: start)
        let value9 = hour.count(at: start.adding(seconds: 3_599))
        #expect(value9 == 1)
        let value10 = hour.count(at: start.adding(seconds: 3_660))
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
