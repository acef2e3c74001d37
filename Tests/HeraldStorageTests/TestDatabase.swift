import Foundation
import HeraldCore
import HeraldStorage
import Logging

/// The PostgreSQL server the test command started, if any: each store gets a new empty
/// database on it, so tests never see each other's rows.
enum TestDatabase {
    static let location = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES"].flatMap {
        PostgresStore.Location(url: $0)
    }

    static var isAvailable: Bool { location != nil }

    static func makeStore(nodeID: String = "test-node") async throws -> PostgresStore {
        guard var location else { throw StoreError.notFound("HERALD_TEST_POSTGRES") }
        let name = "herald_test_" + SecureRandom.hex(bytes: 8)
        let logger = Logger(label: "herald.test.postgres")
        try await PostgresStore.createDatabase(name, at: location, logger: logger)
        location.database = name
        return try await open(location, nodeID: nodeID)
    }

    /// A prepared store whose pool runs for the rest of the test process, keeping no idle
    /// connection.
    static func open(_ location: PostgresStore.Location, nodeID: String) async throws -> PostgresStore {
        let store = PostgresStore(
            location, nodeID: nodeID, logger: Logger(label: "herald.test.postgres"), connections: 4,
            minimumConnections: 0)
        Task { await store.run() }
        try await store.prepare()
        return store
    }

    /// Another node's store over the same database as `store`.
    static func reopen(_ store: PostgresStore, nodeID: String) async throws -> PostgresStore {
        try await open(store.location, nodeID: nodeID)
    }
}
