/// The ids a session saw acknowledged lately, oldest first, at most `capacity` of them.
/// Every message offered to a device is looked up here, so each id's hash is kept beside
/// it: a look-up compares hashes and compares strings only where a hash matches.
struct RecentIDs: Sendable {
    let capacity: Int
    private var ids: [String] = []
    private var hashes: [Int] = []

    init(capacity: Int) {
        self.capacity = capacity
    }

    func contains(_ id: String) -> Bool {
        let hash = id.hashValue
        for index in hashes.indices where hashes[index] == hash && ids[index] == id {
            return true
        }
        return false
    }

    /// Adds ids, forgetting the oldest beyond `capacity`.
    mutating func append(contentsOf newIDs: [String]) {
        ids.append(contentsOf: newIDs)
        hashes.append(contentsOf: newIDs.map(\.hashValue))
        if ids.count > capacity {
            ids.removeFirst(ids.count - capacity)
            hashes.removeFirst(hashes.count - capacity)
        }
    }
}
