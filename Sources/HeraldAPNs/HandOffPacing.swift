public import HeraldCore

/// When one project's hand-offs in one APNs environment may go (SEMANTICS A3): after
/// failures to reach APNs, a backoff that doubles up to `maximumBackoffSeconds`; after APNs
/// refuses the project's credential, nothing with that credential until it changes or
/// `probeAfterSeconds` pass, the entries looking again every `pausedRecheckSeconds` to see
/// whether it changed. A pure value: the forwarder asks it and tells it what happened.
public struct HandOffPacing: Sendable, Equatable {
    public static let maximumBackoffSeconds: Int64 = 30
    public static let probeAfterSeconds: Int64 = 300
    public static let pausedRecheckSeconds: Int64 = 5

    /// What to do with entries that are due.
    public enum Admission: Sendable, Equatable {
        case send
        /// Put them back until `until`, for `reason`.
        case wait(until: Timestamp, reason: String)
    }

    /// Failures to reach APNs in a row.
    public private(set) var failures = 0
    /// The credential APNs refused, why, and when to try it again.
    public private(set) var refused: (credential: APNsCredential?, reason: String, probeAt: Timestamp)?

    public init() {}

    /// Whether entries may go now with `credential` (nil: the project has none for the environment).
    public func admission(credential: APNsCredential?, now: Timestamp) -> Admission {
        if let refused, refused.credential == credential, now < refused.probeAt {
            return .wait(until: now.adding(seconds: Self.pausedRecheckSeconds), reason: refused.reason)
        }
        return .send
    }

    /// Notes that APNs refused `credential` (or that there is none) at `now`; true when this
    /// starts a refusal rather than repeating one, which is worth one log line.
    public mutating func credentialRefused(_ credential: APNsCredential?, reason: String, now: Timestamp) -> Bool {
        let isNew = refused == nil || refused?.credential != credential || refused?.reason != reason
        refused = (credential, reason, now.adding(seconds: Self.probeAfterSeconds))
        return isNew
    }

    /// Notes a batch that reached APNs (any answer but a failure to connect or a 429/5xx).
    public mutating func reached() {
        failures = 0
        refused = nil
    }

    /// Notes a failure to reach APNs at `now`; answers when to try again.
    public mutating func failed(now: Timestamp) -> Timestamp {
        failures += 1
        return now.adding(seconds: min(Self.maximumBackoffSeconds, Int64(1) << min(failures - 1, 10)))
    }

    public static func == (lhs: HandOffPacing, rhs: HandOffPacing) -> Bool {
        lhs.failures == rhs.failures && lhs.refused?.credential == rhs.refused?.credential
            && lhs.refused?.reason == rhs.refused?.reason && lhs.refused?.probeAt == rhs.refused?.probeAt
    }
}
