public import HeraldCore

/// The queue entries of app instances reached through another push service (APNs, FCM): each
/// is claimed by one node at a time, for a while, and stays queued until it is delivered
/// (acknowledged), refused for good, or expires. A node that dies holding a claim only
/// delays the entry until the claim runs out.
public protocol HandOffStore: Sendable {
    /// Claims up to `limit` unexpired entries whose hand-off is due at `now`, oldest due
    /// first, until `until`: no other claim takes them before then.
    func claimHandOffs(limit: Int, now: Timestamp, until: Timestamp) async throws -> [HandOff]

    /// Moves the next hand-off of the entries `sequences` to `at` (a retry's backoff, or a
    /// claim given back).
    func deferHandOffs(_ sequences: [Int64], to at: Timestamp) async throws

    /// The live registration of a project whose APNs address is `apns`, if any.
    func registration(apns: APNsAddress, projectID: String) async throws -> Registration?
}
