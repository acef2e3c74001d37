public import HeraldCore

/// When one project's hand-offs to another push service (one APNs environment, or FCM) may
/// go (SEMANTICS A3, R4): after failures to reach it, a backoff that doubles up to
/// `maximumBackoffSeconds`, longer when the service says so (`Retry-After`), during which
/// none of the project's entries go, new ones included; after it
/// refuses the project's credential, nothing with that credential until it changes or
/// `probeAfterSeconds` pass, the entries looking again every `pausedRecheckSeconds` to see
/// whether it changed. A pure value: the forwarder asks it and tells it what happened.
public struct HandOffPacing<Credential: Hashable & Sendable>: Sendable, Equatable {
    public static var maximumBackoffSeconds: Int64 { 30 }
    public static var probeAfterSeconds: Int64 { 300 }
    public static var pausedRecheckSeconds: Int64 { 5 }

    /// What to do with entries that are due.
    public enum Admission: Sendable, Equatable {
        case send
        /// Put them back until `until`, for `reason`.
        case wait(until: Timestamp, reason: String)
    }

    /// Failures to reach the service in a row.
    public private(set) var failures = 0
    /// Until when the last failure holds the project's entries back.
    public private(set) var resumeAt: Timestamp?
    /// The credential the service refused, why, and when to try it again.
    public private(set) var refused: (credential: Credential?, reason: String, probeAt: Timestamp)?

    public init() {}

    /// Whether entries may go now with `credential` (nil: the project has none).
    public func admission(credential: Credential?, now: Timestamp) -> Admission {
        if let refused, refused.credential == credential, now < refused.probeAt {
            return .wait(until: now.adding(seconds: Self.pausedRecheckSeconds), reason: refused.reason)
        }
        if let resumeAt, now < resumeAt { return .wait(until: resumeAt, reason: "backing off") }
        return .send
    }

    /// Notes that the service refused `credential` (or that there is none) at `now`; true when this
    /// starts a refusal rather than repeating one, which is worth one log line.
    public mutating func credentialRefused(_ credential: Credential?, reason: String, now: Timestamp) -> Bool {
        let isNew = refused == nil || refused?.credential != credential || refused?.reason != reason
        refused = (credential, reason, now.adding(seconds: Self.probeAfterSeconds))
        return isNew
    }

    /// Notes a batch that reached the service (any answer but a failure to connect or a 429/5xx).
    public mutating func reached() {
        failures = 0
        resumeAt = nil
        refused = nil
    }

    /// Notes a failure to reach the service at `now`; answers when to try again: the
    /// backoff, stretched by `jitter` (0 to 1, a half of it at most), and no sooner than
    /// `retryAfterSeconds` (the service's `Retry-After`) or `atLeastSeconds`.
    public mutating func failed(
        now: Timestamp, retryAfterSeconds: Int64? = nil, atLeastSeconds: Int64 = 0, jitter: Double = 0
    ) -> Timestamp {
        failures += 1
        let backoff = min(Self.maximumBackoffSeconds, Int64(1) << min(failures - 1, 10))
        let stretched = backoff * 1000 + Int64(Double(backoff * 500) * min(max(jitter, 0), 1))
        let milliseconds = max(stretched, (retryAfterSeconds ?? 0) * 1000, atLeastSeconds * 1000)
        let resume = Timestamp(milliseconds: now.milliseconds + milliseconds)
        resumeAt = resume
        return resume
    }

    public static func == (lhs: HandOffPacing, rhs: HandOffPacing) -> Bool {
        lhs.failures == rhs.failures && lhs.resumeAt == rhs.resumeAt
            && lhs.refused?.credential == rhs.refused?.credential
            && lhs.refused?.reason == rhs.refused?.reason && lhs.refused?.probeAt == rhs.refused?.probeAt
    }
}
