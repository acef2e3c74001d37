import PostgresNIO
import Synchronization

extension PostgresStore {
    /// How long a statement waits for a connection of the primary's pool: a pool whose host
    /// went away keeps requests waiting while it tries to connect again, and a send must
    /// hear `UNAVAILABLE` (and retry) rather than wait for that.
    static let leaseTimeout: Duration = .seconds(5)

    /// Why a statement gave up waiting for a connection.
    struct LeaseTimedOut: Error {}

    /// Runs `body` on a connection of `client`'s pool, giving up (`LeaseTimedOut`) when no
    /// connection came within `leaseTimeout`. Once a connection came, `body` runs to its end.
    func withLeasedConnection<T: Sendable>(
        _ client: PostgresClient, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let leased = LeaseFlag()
        return try await withoutActuallyEscaping(body) { body in
            // The group ends before this function returns, so `body` does not outlive it;
            // it runs in one child task at a time, as it would have run in this one.
            let work = UncheckedBody(body: body)
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        leased.value.store(true, ordering: .relaxed)
                        return try await work.body(connection)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: Self.leaseTimeout)
                    if leased.value.load(ordering: .relaxed) { return nil }
                    throw LeaseTimedOut()
                }
                defer { group.cancelAll() }
                while let result = try await group.next() {
                    if let result { return result }
                }
                throw LeaseTimedOut()
            }
        }
    }
}

/// A statement's body, handed to the child task that runs it (`withLeasedConnection`).
private struct UncheckedBody<T>: @unchecked Sendable {
    let body: (PostgresConnection) async throws -> T
}

/// Whether a statement's connection came.
private final class LeaseFlag: Sendable {
    let value = Atomic<Bool>(false)
}
