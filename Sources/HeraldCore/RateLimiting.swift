/// Counts events over a sliding window that is not aligned to clock minutes (SEMANTICS
/// T1, T2, T6): the window is cut into buckets, and the events of a bucket leave the count
/// steadily over the bucket's length once the whole bucket lies a window in the past.
/// Every event therefore leaves after the true count of a window-long interval ending now
/// has lost it: a limit checked against the count is never exceeded, and an event frees
/// its room at most two buckets after a window. The room comes back as evenly as the
/// bucket's events leave, not in one lump at a bucket's start, so a sender past a limit
/// gets its sends through at the rate room comes back, not in bursts.
public struct SlidingWindow: Sendable {
    public let bucketMilliseconds: Int64
    /// Buckets a window spans.
    public let span: Int
    /// The window's buckets and the one leaving it, as a ring.
    private var buckets: [Int32]
    /// The absolute index (time / bucket length) of the newest bucket.
    private var newest: Int64 = 0
    /// The events of every bucket in the ring, the leaving one whole.
    private var stored: Int = 0

    /// A window of `windowMilliseconds` cut into `buckets` buckets.
    public init(windowMilliseconds: Int64, buckets: Int) {
        precondition(buckets > 0 && windowMilliseconds >= Int64(buckets))
        bucketMilliseconds = windowMilliseconds / Int64(buckets)
        span = buckets
        self.buckets = Array(repeating: 0, count: buckets + 2)
    }

    /// The events still counted at `now`, a part of one still leaving rounded up.
    public mutating func count(at now: Timestamp) -> Int {
        advance(to: now)
        return Int(counted(at: now).rounded(.up))
    }

    /// Adds `amount` events at `now`, in the bucket of `now` even when newer buckets have
    /// begun since (nothing, once that bucket has left). A negative amount takes back
    /// events added at `now`: a send refunded after its work, while other sends went on.
    public mutating func add(_ amount: Int, at now: Timestamp) {
        advance(to: now)
        let index = min(newest, now.milliseconds / bucketMilliseconds)
        guard index >= newest - Int64(span) - 1 else { return }
        let slot = slot(index)
        let applied = max(amount, -Int(buckets[slot]))
        buckets[slot] += Int32(applied)
        stored += applied
    }

    /// Milliseconds from `now` until `needed` more events fit under `limit`; 0 when they fit now.
    public mutating func wait(toFit needed: Int, limit: Int, at now: Timestamp) -> Int64 {
        var none: SlidingWindow? = nil
        return wait(toFit: needed, limit: limit, besides: &none, at: now)
    }

    /// Milliseconds from `now` until `needed` more events fit under `limit`, counting this
    /// window's events and `other`'s (e.g. what other nodes counted): a window as long as
    /// this one that may be cut into other buckets. 0 when they fit now.
    public mutating func wait(
        toFit needed: Int, limit: Int, besides other: inout SlidingWindow?, at now: Timestamp
    ) -> Int64 {
        advance(to: now)
        other?.advance(to: now)
        // How many counted events must leave first.
        var excess = counted(at: now) + (other?.counted(at: now) ?? 0) + Double(needed) - Double(limit)
        guard excess > 0 else { return 0 }
        let never = max(gone(at: now), other?.gone(at: now) ?? 0)
        guard needed <= limit else { return never }
        // Each window's buckets leave one after the other, each at a steady rate over its
        // length; times are milliseconds from `now`.
        var mine = Leaving(self, now: now)
        var theirs = other.map { Leaving($0, now: now) }
        var time = 0.0
        while true {
            let end = min(mine.end, theirs?.end ?? .infinity)
            guard end.isFinite else { return never }
            let rate = mine.rate + (theirs?.rate ?? 0)
            if rate > 0, rate * (end - time) >= excess {
                return max(1, Int64((time + excess / rate).rounded(.up)))
            }
            excess -= rate * (end - time)
            time = end
            if mine.end == end { mine.next(self) }
            if theirs?.end == end, let other { theirs!.next(other) }
        }
    }

    /// One window's bucket leaving now or next, during `wait`.
    private struct Leaving {
        var index: Int64
        /// Events a millisecond.
        var rate: Double
        /// When it is gone, in milliseconds from `now`.
        var end: Double
        let newest: Int64

        init(_ window: SlidingWindow, now: Timestamp) {
            newest = window.newest
            index = window.newest - Int64(window.span) - 1
            rate = Double(window.buckets[window.slot(index)]) / Double(window.bucketMilliseconds)
            end = Double((newest + 1) * window.bucketMilliseconds - now.milliseconds)
        }

        mutating func next(_ window: SlidingWindow) {
            index += 1
            guard index <= newest else {
                (rate, end) = (0, .infinity)
                return
            }
            rate = Double(window.buckets[window.slot(index)]) / Double(window.bucketMilliseconds)
            end += Double(window.bucketMilliseconds)
        }
    }

    /// The events counted at `now` (after `advance(to: now)`): the leaving bucket's in part.
    private func counted(at now: Timestamp) -> Double {
        let leaving = buckets[slot(newest - Int64(span) - 1)]
        guard leaving != 0 else { return Double(stored) }
        let elapsed = max(0, now.milliseconds - newest * bucketMilliseconds)
        return Double(stored) - Double(leaving) * Double(elapsed) / Double(bucketMilliseconds)
    }

    /// Milliseconds from `now` until every event counted now is gone.
    private func gone(at now: Timestamp) -> Int64 {
        (newest + Int64(span) + 2) * bucketMilliseconds - now.milliseconds
    }

    /// The events still inside the window at `now`, summed over longer periods of
    /// `milliseconds` (a multiple of the bucket length): each period's start (milliseconds
    /// since the epoch) and count, oldest first, empty periods left out. Nodes tell each
    /// other their counts this way, in fewer rows; a period's events then leave with its
    /// last bucket, so no window-long interval is ever counted short.
    public mutating func counts(at now: Timestamp, per milliseconds: Int64) -> [(start: Int64, count: Int)] {
        precondition(milliseconds % bucketMilliseconds == 0)
        var periods: [(start: Int64, count: Int)] = []
        for bucket in counts(at: now) {
            let start = bucket.start - bucket.start % milliseconds
            if periods.last?.start == start {
                periods[periods.count - 1].count += bucket.count
            } else {
                periods.append((start, bucket.count))
            }
        }
        return periods
    }

    /// The non-empty buckets still counted at `now` (the leaving one whole): each bucket's
    /// start (milliseconds since the epoch) and count, oldest first.
    public mutating func counts(at now: Timestamp) -> [(start: Int64, count: Int)] {
        advance(to: now)
        return stride(from: newest - Int64(span) - 1, through: newest, by: 1).compactMap { index in
            let count = Int(buckets[slot(index)])
            return count == 0 ? nil : (index * bucketMilliseconds, count)
        }
    }

    /// Where the bucket with this absolute index lives in the ring (indices before the
    /// first bucket count as empty slots of the ring too).
    private func slot(_ index: Int64) -> Int {
        let size = Int64(buckets.count)
        return Int((index % size + size) % size)
    }

    /// Whether nothing is counted any more at `now`.
    public mutating func isEmpty(at now: Timestamp) -> Bool {
        advance(to: now)
        return stored == 0
    }

    private mutating func advance(to now: Timestamp) {
        let current = now.milliseconds / bucketMilliseconds
        guard current > newest else { return }
        if current - newest >= Int64(buckets.count) {
            for index in buckets.indices { buckets[index] = 0 }
            stored = 0
        } else {
            for index in (newest + 1)...current {
                let slot = slot(index)
                stored -= Int(buckets[slot])
                buckets[slot] = 0
            }
        }
        newest = current
    }
}

/// A token bucket (SEMANTICS T4): `capacity` tokens, one more every `refillMilliseconds`,
/// starting full.
public struct TokenBucket: Sendable {
    public private(set) var tokens: Int
    /// When the last token was added (or the bucket was last seen full).
    private var refilledAt: Timestamp

    public init(capacity: Int, now: Timestamp) {
        tokens = capacity
        refilledAt = now
    }

    /// Takes a token if one is there at `now`.
    public mutating func take(capacity: Int, refillMilliseconds: Int64, now: Timestamp) -> Bool {
        refill(capacity: capacity, refillMilliseconds: refillMilliseconds, now: now)
        guard tokens > 0 else { return false }
        tokens -= 1
        return true
    }

    /// When the next token will be there (`now` when one is).
    public mutating func nextToken(capacity: Int, refillMilliseconds: Int64, now: Timestamp) -> Timestamp {
        refill(capacity: capacity, refillMilliseconds: refillMilliseconds, now: now)
        return tokens > 0 ? now : refilledAt.adding(milliseconds: refillMilliseconds)
    }

    /// Whether the bucket is full at `now` (and can be forgotten).
    public mutating func isFull(capacity: Int, refillMilliseconds: Int64, now: Timestamp) -> Bool {
        refill(capacity: capacity, refillMilliseconds: refillMilliseconds, now: now)
        return tokens >= capacity
    }

    private mutating func refill(capacity: Int, refillMilliseconds: Int64, now: Timestamp) {
        if tokens >= capacity {
            tokens = capacity
            refilledAt = now
            return
        }
        let step = max(1, refillMilliseconds)
        let added = (now.milliseconds - refilledAt.milliseconds) / step
        guard added > 0 else { return }
        tokens = min(capacity, tokens + Int(min(added, Int64(capacity))))
        refilledAt = tokens >= capacity ? now : refilledAt.adding(milliseconds: added * step)
    }
}
