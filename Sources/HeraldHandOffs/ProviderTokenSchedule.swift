public import HeraldCore

/// When a provider token (the ES256 JWT of a token-based credential) is made again
/// (SEMANTICS A3): APNs refuses tokens older than an hour and connections that change
/// theirs more often than every 20 minutes, so a token is kept for 50 minutes, and made
/// again early only when APNs says it expired and it is at least 20 minutes old.
public struct ProviderTokenSchedule: Sendable, Equatable {
    /// Made again after this long.
    public static let renewAfterSeconds: Int64 = 50 * 60
    /// Never made again sooner than this.
    public static let keepAtLeastSeconds: Int64 = 20 * 60

    /// When the current token was made; nil before the first.
    public private(set) var issuedAt: Timestamp?

    public init() {}

    /// Whether a request at `now` needs a new token first.
    public func needsToken(at now: Timestamp) -> Bool {
        guard let issuedAt else { return true }
        return now.seconds - issuedAt.seconds >= Self.renewAfterSeconds
    }

    /// Whether APNs' `ExpiredProviderToken` at `now` may be answered with a new token.
    public func mayRenewEarly(at now: Timestamp) -> Bool {
        guard let issuedAt else { return true }
        return now.seconds - issuedAt.seconds >= Self.keepAtLeastSeconds
    }

    /// Notes a token made at `now`.
    public mutating func issued(at now: Timestamp) { issuedAt = now }
}
