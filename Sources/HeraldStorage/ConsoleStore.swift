public import HeraldCore

/// What the console keeps: its users, and short-lived values under keys (its sign-in
/// sessions), shared by every node so that a session made on one is known on all.
///
/// Every method is a transaction of its own; a method that returns has made its change durable.
public protocol ConsoleStore: Sendable {
    /// Creates the user, or replaces the one of the same name.
    func saveConsoleUser(_ user: ConsoleUser) async throws

    /// The user of that name, if there is one.
    func consoleUser(name: String) async throws -> ConsoleUser?

    /// Every user, by name.
    func consoleUsers() async throws -> [ConsoleUser]

    /// Keeps `value` under `key` until `expiresAt` (nil: until removed). When `replacing` is
    /// false and an unexpired value is kept under the key already, changes nothing and
    /// answers false.
    @discardableResult
    func putConsoleValue(key: String, value: [UInt8], expiresAt: Timestamp?, replacing: Bool, now: Timestamp)
        async throws -> Bool

    /// The value kept under `key`, unless it expired by `now`.
    func consoleValue(key: String, now: Timestamp) async throws -> (value: [UInt8], expiresAt: Timestamp?)?

    /// Forgets the value under `key`.
    func removeConsoleValue(key: String) async throws

    /// Deletes up to `limit` values that expired by `now`; answers how many.
    func deleteExpiredConsoleValues(now: Timestamp, limit: Int) async throws -> Int
}
