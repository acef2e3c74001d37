import Foundation
import HeraldCore
public import HeraldStorage
import Logging

/// The PostgreSQL server the test command started, if any (`HERALD_TEST_POSTGRES`).
public enum TestPostgres {
    public static let location = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES"].flatMap {
        PostgresStore.Location(url: $0)
    }

    /// How long a test waits for the database: the whole suite runs at once on two cores, and
    /// other suites' key generation can hold the test process's threads for many seconds.
    static let answerTimeout: Duration = .seconds(120)

    /// A prepared store of `nodeID` over a new empty database, or over `sharing`'s; its pool
    /// runs for the rest of the test process.
    public static func store(
        _ nodeID: String, address: String = "", sharing: PostgresStore? = nil, listening: Bool = false
    ) async throws -> PostgresStore {
        let logger = Logger(label: "herald.test.postgres")
        guard var location else { throw StoreError.notFound("HERALD_TEST_POSTGRES") }
        if let sharing {
            location = sharing.location
        } else {
            let name = "herald_test_" + SecureRandom.hex(bytes: 8)
            try await PostgresStore.createDatabase(name, at: location, logger: logger, timeout: answerTimeout)
            location.database = name
        }
        let store = PostgresStore(
            location, nodeID: nodeID, nodeAddress: address, logger: logger, connections: 4, minimumConnections: 0,
            listening: listening)
        Task { await store.run() }
        try await store.prepare(timeout: answerTimeout)
        return store
    }
}
