public import HeraldCore

/// The console's users and sessions (`ConsoleStore`).
extension InMemoryStore {
    public func saveConsoleUser(_ user: ConsoleUser) { consoleUsersByName[user.name] = user }

    public func consoleUser(name: String) -> ConsoleUser? { consoleUsersByName[name] }

    public func consoleUsers() -> [ConsoleUser] { consoleUsersByName.values.sorted { $0.name < $1.name } }

    public func putConsoleValue(key: String, value: [UInt8], expiresAt: Timestamp?, replacing: Bool, now: Timestamp)
        -> Bool
    {
        if !replacing, consoleValue(key: key, now: now) != nil { return false }
        consoleValues[key] = (value, expiresAt)
        return true
    }

    public func consoleValue(key: String, now: Timestamp) -> (value: [UInt8], expiresAt: Timestamp?)? {
        guard let kept = consoleValues[key], kept.expiresAt.map({ $0 > now }) ?? true else { return nil }
        return kept
    }

    public func removeConsoleValue(key: String) { consoleValues[key] = nil }

    public func deleteExpiredConsoleValues(now: Timestamp, limit: Int) -> Int {
        let expired = consoleValues.filter { $0.value.expiresAt.map { $0 <= now } ?? false }.keys.prefix(limit)
        for key in expired { consoleValues[key] = nil }
        return expired.count
    }
}
