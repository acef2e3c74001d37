/// Counts events over a sliding window that is not aligned to clock minutes (SEMANTICS
/// T1, T2, T6): the window is cut into buckets, and an event leaves the count once its
/// whole bucket lies more than a window in the past. The count is therefore never below
/// the true count of any window-long interval ending now: a limit checked against it is
/// never exceeded, and an event frees its room at most one bucket after a window.
public struct SlidingWindow: Sendable {
    public let bucketMilliseconds: Int64
    /// Buckets a window spans.
    public let span: Int
    private var buckets: [Int32]
    /// The absolute index (time / bucket length) of the newest bucket.
    private var newest: Int64 = 0
    public private(set) var total: Int = 0

    /// A window of `windowMilliseconds` cut into `buckets` buckets.
    public init(windowMilliseconds: Int64, buckets: Int) {
        precondition(buckets > 0 && windowMilliseconds >= Int64(buckets))
        bucketMilliseconds = windowMilliseconds / Int64(buckets)
        span = buckets
        self.buckets = Array(repeating: 0, count: buckets + 1)
    }

    /// The events still inside the window at `now`.
    public mutating func count(at now: Timestamp) -> Int {
        advance(to: now)
        return total
    }

    /// Adds `amount` events at `now` (a negative amount takes back events added at `now`).
    public mutating func add(_ amount: Int, at now: Timestamp) {
        advance(to: now)
        let slot = slot(newest)
        let applied = max(amount, -Int(buckets[slot]))
        buckets[slot] += Int32(applied)
        total += applied
    }

    /// Milliseconds from `now` until `needed` more events fit under `limit`; 0 when they fit now.
    public mutating func wait(toFit needed: Int, limit: Int, at now: Timestamp) -> Int64 {
        advance(to: now)
        guard total + needed > limit else { return 0 }
        guard needed <= limit else { return Int64(span + 1) * bucketMilliseconds }
        var remaining = total
        // Oldest first: the bucket `newest - span` leaves at the start of bucket `newest + 1`.
        for age in stride(from: span, through: 0, by: -1) {
            let index = newest - Int64(age)
            remaining -= Int(buckets[slot(index)])
            if remaining + needed <= limit {
                return (index + Int64(span) + 1) * bucketMilliseconds - now.milliseconds
            }
        }
        return Int64(span + 1) * bucketMilliseconds
    }

    /// This window's counts plus `other`'s (a window of the same shape, e.g. what other
    /// nodes counted), both as of `now`.
    public mutating func adding(_ other: SlidingWindow, at now: Timestamp) -> SlidingWindow {
        precondition(other.bucketMilliseconds == bucketMilliseconds && other.span == span)
        var other = other
        advance(to: now)
        other.advance(to: now)
        var sum = self
        for index in buckets.indices { sum.buckets[index] += other.buckets[index] }
        sum.total += other.total
        return sum
    }

    /// The non-empty buckets inside the window at `now`: each bucket's start (milliseconds
    /// since the epoch) and count, oldest first.
    public mutating func counts(at now: Timestamp) -> [(start: Int64, count: Int)] {
        advance(to: now)
        return stride(from: newest - Int64(span), through: newest, by: 1).compactMap { index in
            let count = Int(buckets[slot(index)])
            return count == 0 ? nil : (index * bucketMilliseconds, count)
        }
    }

    /// Where the bucket with this absolute index lives in the ring (indices before the
    /// first bucket, which `wait` may look at, count as empty slots of the ring too).
    private func slot(_ index: Int64) -> Int {
        let size = Int64(buckets.count)
        return Int((index % size + size) % size)
    }

    /// Whether nothing is counted any more at `now`.
    public mutating func isEmpty(at now: Timestamp) -> Bool { count(at: now) == 0 }

    private mutating func advance(to now: Timestamp) {
        let current = now.milliseconds / bucketMilliseconds
        guard current > newest else { return }
        if current - newest >= Int64(buckets.count) {
            for index in buckets.indices { buckets[index] = 0 }
            total = 0
        } else {
            for index in (newest + 1)...current {
                let slot = slot(index)
                total -= Int(buckets[slot])
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
