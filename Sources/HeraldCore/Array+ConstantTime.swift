extension Array where Element == UInt8 {
    /// Whether two byte strings are equal, compared in time that does not depend on where
    /// they differ (for secrets: tokens, CSRF values).
    public func constantTimeEquals(_ other: [UInt8]) -> Bool {
        guard count == other.count else { return false }
        return zip(self, other).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
