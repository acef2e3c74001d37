import PostgresNIO
import Synchronization

extension PostgresStore {
    /// How long a statement waits for a connection of the primary's pool: a pool whose host
    /// went away keeps requests waiting while it tries to connect again, and a send must
    /// hear `UNAVAILABLE` (and retry) rather than wait for that.
    static let leaseTimeout: Duration = .seconds(5)

    /// How long a statement runs, once it has its connection, before a warning names it.
    static let slowStatement: Duration = .seconds(15)

    /// How often a statement that has run past `leaseTimeout` checks that its host is still
    /// the primary.
    static let hostCheck: Duration = .seconds(1)

    /// Why a statement gave up waiting for a connection.
    struct LeaseTimedOut: Error {}

    /// Runs `body` on a connection of the pool of the host at `index`, giving up
    /// (`LeaseTimedOut`) when no connection came within `leaseTimeout`. Once a connection
    /// came, `body` runs to its end, except that a statement still running once its host is
    /// no longer the primary has its connection closed: in the failover runs a killed
    /// primary left connections open whose statements never answered. A statement running
    /// past `slowStatement` is named in a
    /// warning (none for a nil `statement`: one meant to run long, such as `LISTEN`).
    func withLeasedConnection<T: Sendable>(
        host index: Int, statement: String?, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let client = clients[index]
        let leased = LeasedConnection()
        return try await withoutActuallyEscaping(body) { body in
            // The group ends before this function returns, so `body` does not outlive it;
            // it runs in one child task at a time, as it would have run in this one.
            let work = UncheckedBody(body: body)
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        leased.connection.withLock { $0 = connection }
                        return try await work.body(connection)
                    }
                }
                group.addTask {
                    try await self.leaseDeadlines.wait(until: .now + Self.leaseTimeout)
                    guard let connection = leased.connection.withLock({ $0 }) else { throw LeaseTimedOut() }
                    try await self.watch(connection, host: index, statement: statement)
                    return nil
                }
                defer { group.cancelAll() }
                while let result = try await group.next() {
                    if let result { return result }
                }
                throw LeaseTimedOut()
            }
        }
    }

    /// Watches a statement that has run for `leaseTimeout` until it ends (the caller
    /// cancels): warns once it has run for `slowStatement`, and closes its connection once
    /// its host is no longer the primary.
    private func watch(_ connection: PostgresConnection, host index: Int, statement: String?) async throws {
        var running = Self.leaseTimeout
        while true {
            if primary.index != index {
                logger.warning(
                    "closing a connection whose statement outlived its host as the primary",
                    metadata: [
                        "host": "\(location.hosts[index])", "statement": "\((statement ?? "LISTEN").prefix(120))",
                    ])
                // Not awaited: the statement's caller waits for this task to end, and nothing
                // bounds how long a close to a host that went away takes.
                let closing: EventLoopFuture<Void> = connection.close()
                closing.whenFailure { _ in }
                return
            }
            if let statement, running == Self.slowStatement {
                logger.warning(
                    "a PostgreSQL statement is still running",
                    metadata: ["statement": "\(statement.prefix(120))", "seconds": "\(running.components.seconds)"])
            }
            try await Task.sleep(for: Self.hostCheck)
            running += Self.hostCheck
        }
    }
}

/// A statement's body, handed to the child task that runs it (`withLeasedConnection`).
private struct UncheckedBody<T>: @unchecked Sendable {
    let body: (PostgresConnection) async throws -> T
}

/// The connection a statement was given, once it came.
private final class LeasedConnection: Sendable {
    let connection = Mutex<PostgresConnection?>(nil)
}
