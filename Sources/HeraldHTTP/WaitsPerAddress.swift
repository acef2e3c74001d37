import Synchronization

/// Counts the requests from each source address that are waiting now (long polls), so
/// that one address cannot hold many of them at once.
final class WaitsPerAddress: Sendable {
    private let waiting = Mutex<[String: Int]>([:])
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Runs `body` with `wait` granted: as asked while the address has fewer than `limit`
    /// waits, else none (the request is answered at once).
    func withWait<Result>(
        _ wait: Duration, from address: String, _ body: (Duration) async throws -> Result
    ) async rethrows -> Result {
        guard wait > .zero else { return try await body(.zero) }
        let granted = waiting.withLock { waiting in
            guard waiting[address, default: 0] < limit else { return false }
            waiting[address, default: 0] += 1
            return true
        }
        guard granted else { return try await body(.zero) }
        defer {
            waiting.withLock { waiting in
                let left = waiting[address, default: 1] - 1
                waiting[address] = left > 0 ? left : nil
            }
        }
        return try await body(wait)
    }
}
