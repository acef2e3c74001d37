import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Logging
import Testing

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
        #expect(ContinuousClock.now - started < .seconds(1))
    }
}
