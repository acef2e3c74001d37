import Foundation
import GRDB
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStorage

/// Which releases may open a store (docs/operations.md, Upgrades).
@Suite struct StoreReleaseTests {
    @Test func versionsParseAndCompareAsSemanticVersioningSays() {
        #expect(SemanticVersion("0.10.0") == SemanticVersion(0, 10, 0))
        #expect(SemanticVersion(0, 9, 3) < SemanticVersion(0, 10, 0))
        #expect(SemanticVersion(1, 0, 0) > SemanticVersion(0, 99, 99))
        for text in ["1.2", "1.2.3.4", "1..3", "v1.2.3", "1.2.-3", "", "1.2.3-beta"] {
            #expect(SemanticVersion(text) == nil, "\(text)")
        }
    }

    @Test func openingRecordsTheOldestReaderAndTheNewestWriterWithoutLoweringEither() {
        let fresh = StoreRelease(oldestReader: nil, newestWriter: nil).opened(by: SemanticVersion(0, 10, 0))
        #expect(fresh.oldestReader == StoreRelease.oldestReaderOfThisSchema)
        #expect(fresh.newestWriter == SemanticVersion(0, 10, 0))
        let later = StoreRelease(oldestReader: SemanticVersion(0, 12, 0), newestWriter: SemanticVersion(0, 13, 1))
        #expect(later.opened(by: SemanticVersion(0, 12, 5)) == later)
    }

    @Test func aReleaseOlderThanTheStoresOldestReaderIsRefusedWithWhatToDo() throws {
        let release = StoreRelease(oldestReader: SemanticVersion(0, 11, 0), newestWriter: SemanticVersion(0, 11, 2))
        #expect(throws: Never.self) { try release.check(running: SemanticVersion(0, 11, 0)) }
        let error = #expect(throws: StoreRelease.TooNew.self) { try release.check(running: SemanticVersion(0, 10, 4)) }
        #expect(
            error?.description
                == "this store needs Herald 0.11.0 or newer (last opened by Herald 0.11.2); this is Herald 0.10.4: "
                + "upgrade Herald, or restore a backup taken before the upgrade")
    }

    @Test func theEmbeddedStoreMarksItselfAndRefusesToOpenForANewerRelease() throws {
        let path = (createdTemporaryDirectory() as NSString).appendingPathComponent("herald.sqlite")
        let store = try SQLiteStore(path: path)
        #expect(
            try store.release()
                == StoreRelease(oldestReader: StoreRelease.oldestReaderOfThisSchema, newestWriter: .herald))
        let newer = SemanticVersion(SemanticVersion.herald.major + 1, 0, 0)
        try store.pool.write { db in
            try db.execute(sql: "UPDATE release_marks SET value = ?", arguments: [newer.description])
        }
        let error = #expect(throws: StoreRelease.TooNew.self) { try SQLiteStore(path: path) }
        #expect(error?.release.oldestReader == newer)
        // Refusing changed nothing.
        #expect(try store.release() == StoreRelease(oldestReader: newer, newestWriter: newer))
    }

    @Test(.enabled(if: TestPostgres.location != nil))
    func theSharedStoreMarksItselfAndANodeOfAnOlderReleaseDoesNotStart() async throws {
        let store = try await TestPostgres.store("node-a")
        let marks = try await store.transaction { connection in try await store.release(on: connection) }
        #expect(marks == StoreRelease(oldestReader: StoreRelease.oldestReaderOfThisSchema, newestWriter: .herald))
        try await store.run("UPDATE release_marks SET value = '999.0.0' WHERE name = 'oldest_reader'")
        let second = PostgresStore(store.location, nodeID: "node-b", logger: store.logger, connections: 2)
        let pool = Task { await second.run() }
        defer { pool.cancel() }
        await #expect(throws: StoreRelease.TooNew.self) { try await second.prepare() }
    }
}
