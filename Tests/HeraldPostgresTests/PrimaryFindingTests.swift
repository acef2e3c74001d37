import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import Synchronization
import Testing

@testable import HeraldStorage

/// A store given several hosts uses the one that takes writes, and fails fast while none does.
@Suite(.enabled(if: TestPostgres.location != nil)) struct PrimaryFindingTests {
    /// A loopback port nothing listens on.
    static func closedPort() throws -> Int {
        let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func aHostThatIsDownIsPassedOverForTheOneThatAnswers() async throws {
        let shared = try await TestPostgres.store("node-a")
        var location = shared.location
        location.hosts.insert(.init(name: "127.0.0.1", port: try Self.closedPort()), at: 0)
        let store = PostgresStore(location, nodeID: "node-b", logger: Logger(label: "test"), connections: 2)
        let pool = Task { await store.run() }
        defer { pool.cancel() }
        try await store.prepare(timeout: .seconds(15))
        try await TestServer.addProject("alpha-project", to: store, clock: ManualClock())
        #expect(try await store.project(id: "alpha-project") != nil)
        // Stopping the store does not wait for the host that never answered.
        pool.cancel()
        let stopping = ContinuousClock.now
        await pool.value
        #expect(ContinuousClock.now - stopping < .seconds(5))
    }

    @Test func withNoHostAnsweringStatementsFailAtOnceAsUnavailable() async throws {
        var location = try #require(TestPostgres.location)
        location.hosts = [
            .init(name: "127.0.0.1", port: try Self.closedPort()),
            .init(name: "127.0.0.1", port: try Self.closedPort()),
        ]
        let store = PostgresStore(location, nodeID: "node-c", logger: Logger(label: "test"), connections: 2)
        let pool = Task { await store.run() }
        defer { pool.cancel() }
        let started = ContinuousClock.now
        await #expect(throws: StoreError.self) { _ = try await store.project(id: "alpha-project") }
        // At once: not after the four seconds and more a statement waits for a host that went
        // away (below), with room for a run of the whole suite keeping a task waiting.
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test func aStatementGivesUpWaitingForAConnectionToAHostThatWentAway() async throws {
        var location = try #require(TestPostgres.location)
        location.hosts = [.init(name: "127.0.0.1", port: try Self.closedPort())]
        let store = PostgresStore(location, nodeID: "node-d", logger: Logger(label: "test"), connections: 2)
        let pool = Task { await store.run() }
        defer { pool.cancel() }
        let started = ContinuousClock.now
        await #expect(throws: StoreError.self) { _ = try await store.project(id: "alpha-project") }
        // Five seconds, and more while the test run keeps both cores busy; never for as long
        // as the pool keeps trying the host (minutes).
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(4) && waited < .seconds(60))
    }

    @Test func aStatementStillRunningWhenItsHostStopsBeingThePrimaryIsCutOff() async throws {
        // Two hosts that are one server; the first answers writable until it is "demoted",
        // the second from then on.
        let shared = try await TestPostgres.store("node-e")
        var location = shared.location
        location.hosts = [location.hosts[0], location.hosts[0]]
        let store = PostgresStore(location, nodeID: "node-f", logger: Logger(label: "test"), connections: 2)
        let demoted = Mutex(false)
        let pool = Task {
            // Until then the second answers read-only, so that the first is the primary.
            await store.run(probing: { host in
                if (host == 0) == demoted.withLock({ $0 }) { return false }
                return await store.isWritable(host)
            })
        }
        defer { pool.cancel() }
        try await store.prepare(timeout: .seconds(15), migrating: false)
        #expect(store.primary.index == 0)
        let started = ContinuousClock.now
        let sleeping = Task { try await store.run("SELECT pg_sleep(60)") }
        try await Task.sleep(for: .seconds(1))
        demoted.withLock { $0 = true }
        await #expect(throws: StoreError.self) { try await sleeping.value }
        // Cut off once it has run for the lease timeout and its host was seen demoted, long
        // before the statement's own minute.
        #expect(ContinuousClock.now - started < .seconds(40))
        #expect(store.primary.index == 1)
    }

    @Test(.timeLimit(.minutes(3))) func aTransactionWhoseConnectionTheServerEndedIsTriedAgainInsteadOfWaiting()
        async throws
    {
        let store = try await TestPostgres.store("node-g")
        let attempts = Mutex(0)
        let answer = try await store.transaction { connection in
            let attempt = attempts.withLock { count in
                count += 1
                return count
            }
            if attempt == 1 {
                // The server ends this connection, as it ends every one when its primary goes away.
                _ = try? await store.run("SELECT pg_terminate_backend(pg_backend_pid())", on: connection)
                for _ in 0..<200 where !connection.isClosed { try await Task.sleep(for: .milliseconds(50)) }
                #expect(connection.isClosed)
            }
            // Written to the ended connection, this would never be answered.
            return try await store.rows("SELECT 1", on: connection).count
        }
        #expect(answer == 1)
        #expect(attempts.withLock { $0 } >= 2)
    }
}
