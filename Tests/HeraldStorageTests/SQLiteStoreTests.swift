import Foundation
import GRDB
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStorage

/// What only the embedded store does.
@Suite struct SQLiteStoreTests {
    @Test func theDataDirectoryAndEveryFileInItAreTheOwnersAloneWhateverTheUmask() async throws {
        let parent = createdTemporaryDirectory()
        let directory = (parent as NSString).appendingPathComponent("data")
        let old = umask(0)
        defer { umask(old) }
        // An earlier version's directory and a file in it, readable by everyone.
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        FileManager.default.createFile(
            atPath: (directory as NSString).appendingPathComponent("node-id"), contents: Data("x".utf8),
            attributes: [.posixPermissions: 0o644])
        let store = try SQLiteStore(dataDirectory: directory)
        _ = try await store.secret(named: "s") { [1] }
        func mode(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(directory) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(Set(files).isSuperset(of: ["herald.sqlite", "herald.sqlite-wal", "herald.sqlite-shm", "node-id"]))
        for file in files {
            #expect(try mode((directory as NSString).appendingPathComponent(file)) == 0o600, "\(file)")
        }
    }

    /// A store over a database left at `version` holding a project (`alpha-project`) and
    /// `rows` (SQL), migrated on opening.
    static func store(migratedFrom version: String, rows: String) async throws -> SQLiteStore {
        let path = (createdTemporaryDirectory() as NSString).appendingPathComponent("herald.sqlite")
        let old = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(old, upTo: version)
        try await old.write { db in
            try db.execute(
                sql: """
                    INSERT INTO projects (id, number, api_key, server_key, created_at, settings)
                        VALUES ('alpha-project', 1, 'a', 's', 0, '{}');
                    """ + rows)
        }
        try old.close()
        return try SQLiteStore(path: path)
    }

    /// The log is copied into the database file only when something was written since the
    /// last copy: an idle server's checkpoints take no lock.
    @Test func aCheckpointRunsOnlyAfterAWrite() async throws {
        let store = try SQLiteStore(dataDirectory: createdTemporaryDirectory())
        #expect(try await store.checkpoint())
        #expect(try await !store.checkpoint())
        try await store.createDevice(Device(androidID: 42, securityToken: 7, createdAt: Timestamp(seconds: 1)))
        #expect(try await store.checkpoint())
        #expect(try await !store.checkpoint())
        // A new store over the same files reads what was written.
        let reopened = try SQLiteStore(path: store.pool.path)
        #expect(try await reopened.device(androidID: 42)?.securityToken == 7)
    }

    /// L4: a write whose running statement SQLite interrupts because its task was
    /// cancelled, as at a stop, is reported as a cancellation: the acknowledgement batcher
    /// then keeps its batch for the last flush instead of dropping it.
    @Test func L4_aWriteInterruptedByItsTasksCancellationIsACancellation() async throws {
        let store = try SQLiteStore(dataDirectory: createdTemporaryDirectory())
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        // 100,000 expired rows on as many devices: one sweep statement long enough to be
        // under way when the cancellation comes.
        let rows = (0..<100_000).map { index in
            var row = entry("m\(index)", token: "t\(index)", expires: 150)
            row.androidID = UInt64(index + 1)
            return row
        }
        try await store.appendMessages([], queue: rows)
        let sweep = Task { try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 1_000_000) }
        try await Task.sleep(for: .milliseconds(20))
        sweep.cancel()
        await #expect(throws: CancellationError.self) { try await sweep.value }
    }

    /// T3: a database from before fanout pages went in device order is migrated: its
    /// subscriptions learn their devices, so its topics' pages come in device order.
    @Test func T3_subscriptionsStoredBeforeDeviceOrderAreReadInDeviceOrder() async throws {
        let store = try await Self.store(
            migratedFrom: "v7-fanout-first-devices",
            rows: """
                INSERT INTO devices (android_id, security_token, created_at) VALUES (9, 1, 0), (-5, 1, 0);
                INSERT INTO registrations (token, kind, project_id, sender, app_id, platform, android_id, created_at)
                    VALUES ('t1', 'app', 'alpha-project', '1', 'app', 'android', 9, 0),
                        ('t2', 'app', 'alpha-project', '1', 'app', 'android', -5, 0);
                INSERT INTO topic_subscriptions (token, topic, project_id, created_at)
                    VALUES ('t1', 'news', 'alpha-project', 0), ('t2', 'news', 'alpha-project', 0);
                """)
        let first = try await store.audience(projectID: "alpha-project", topics: ["news"], after: "", limit: 1)
        #expect(first.map(\.token) == ["t2"])
        let next = FanoutPosition.start.advanced(past: try #require(first.first)).cursor
        let second = try await store.audience(projectID: "alpha-project", topics: ["news"], after: next, limit: 1)
        #expect(second.map(\.token) == ["t1"])
    }

    /// D1: a batch's entries with the same stanza (a fanout page's app instances of one app)
    /// share one stored copy; each reads its stanza back, and the copy goes once the last row
    /// pointing at it has.
    @Test func D1_aStanzaSharedWithinABatchIsStoredOnceAndGoesWithItsLastRow() async throws {
        let directory = createdTemporaryDirectory()
        let store = try SQLiteStore(dataDirectory: directory)
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        let shared = [UInt8](repeating: 7, count: 300)
        let rows = (1...4).map { device in
            var row = entry("m", token: "t\(device)")
            row.androidID = UInt64(device)
            row.stanza = device == 4 ? [5, 5] : shared
            return row
        }
        try await store.appendMessages([], queue: rows)
        let database = try DatabaseQueue(path: (directory as NSString).appendingPathComponent("herald.sqlite"))
        func stored() throws -> (copies: Int, bytesInRows: Int) {
            try database.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM queue_stanzas") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT SUM(length(stanza)) FROM device_queue") ?? -1
                )
            }
        }
        #expect(try stored() == (1, 2))
        for device in 1...4 {
            let pending = try await store.pendingMessages(
                androidID: UInt64(device), after: 0, limit: 10, now: Timestamp(seconds: 200))
            #expect(pending.map(\.stanza) == [device == 4 ? [5, 5] : shared])
        }
        for device in 1...2 { _ = try await store.acknowledge(androidID: UInt64(device), persistentIDs: ["m"]) }
        _ = try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 1000)
        #expect(try stored().copies == 1)
        let last = try await store.pendingMessages(androidID: 3, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(last.map(\.stanza) == [shared])
        _ = try await store.acknowledge(androidID: 3, persistentIDs: ["m"])
        _ = try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 1000)
        #expect(try stored() == (0, 2))
        let own = try await store.pendingMessages(androidID: 4, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(own.map(\.stanza) == [[5, 5]])
    }

    /// D1: rows stored before stanzas were shared keep their own, and read back as before;
    /// a new batch beside them shares its copy.
    @Test func D1_rowsStoredBeforeSharedStanzasReadTheirOwn() async throws {
        let store = try await Self.store(
            migratedFrom: "v8-fanout-pages-by-device",
            rows: """
                INSERT INTO device_queue (android_id, token, persistent_id, message_id, project_id, stanza,
                    created_at, expires_at)
                    VALUES (42, 'tok', 'old', 'old', 'alpha-project', X'0303', 0, 10000000);
                """)
        try await store.appendMessages([], queue: [entry("new1", token: "tok"), entry("new2", token: "other")])
        let pending = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(pending.map(\.persistentID) == ["old", "new1", "new2"])
        #expect(pending.map(\.stanza) == [[3, 3], [1], [1]])
    }

    /// D1: a sweep looks at no more shared stanzas than its limit, and the next one goes on
    /// where it stopped, so an unused stanza behind many live ones still goes.
    @Test func D1_sweepsLookForUnusedStanzasAFewAtATimeInTurn() async throws {
        let directory = createdTemporaryDirectory()
        let store = try SQLiteStore(dataDirectory: directory)
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        for (index, message) in ["live", "acknowledged"].enumerated() {
            let rows = (1...2).map { device in
                var row = entry(message, token: "t\(device)")
                row.androidID = UInt64(device)
                row.stanza = [UInt8(index + 1), 0]
                return row
            }
            try await store.appendMessages([], queue: rows)
        }
        for device in 1...2 {
            _ = try await store.acknowledge(androidID: UInt64(device), persistentIDs: ["acknowledged"])
        }
        let database = try DatabaseQueue(path: (directory as NSString).appendingPathComponent("herald.sqlite"))
        func stanzas() throws -> [[UInt8]] {
            try database.read { db in
                try Data.fetchAll(db, sql: "SELECT stanza FROM queue_stanzas ORDER BY id").map { [UInt8]($0) }
            }
        }
        #expect(try stanzas() == [[1, 0], [2, 0]])
        _ = try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 1)
        #expect(try stanzas() == [[1, 0], [2, 0]])
        _ = try await store.deleteExpired(now: Timestamp(seconds: 200), limit: 1)
        #expect(try stanzas() == [[1, 0]])
    }

    /// C2: a registration the server looked up is forgotten when the command line, in
    /// another process, deletes its project: once the server has seen the credentials
    /// revision move (it polls it), the token is unknown.
    @Test func C2_aProjectDeletedByAnotherProcessTakesItsRememberedRegistrationsWithIt() async throws {
        let directory = createdTemporaryDirectory()
        let server = try SQLiteStore(dataDirectory: directory)
        try await server.createProject(sampleProject(), firstKey: sampleKey("k1"))
        try await server.createDevice(Device(androidID: 42, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        try await server.createRegistration(sampleRegistration("tok"))
        _ = try await server.credentialsRevision()
        #expect(try await server.registration(token: "tok")?.projectID == "alpha-project")
        #expect(server.registrations.count == 1)

        let commandLine = try SQLiteStore(dataDirectory: directory)
        #expect(try await commandLine.deleteProject(id: "alpha-project"))
        _ = try await server.credentialsRevision()
        #expect(try await server.registration(token: "tok") == nil)
    }

    /// C2: a look-up that read a registration before a change to it committed does not
    /// keep what it read; the cache holds at most its capacity.
    @Test func C2_theRegistrationCacheKeepsNothingReadBeforeAChangeAndStaysBounded() {
        let cache = RegistrationCache(capacity: 3)
        let before = cache.generation
        cache.forget(token: "tok")
        cache.keep(sampleRegistration("tok"), readAt: before)
        #expect(cache.registration(token: "tok") == nil)
        cache.keep(sampleRegistration("tok"), readAt: cache.generation)
        #expect(cache.registration(token: "tok")?.token == "tok")

        let generation = cache.generation
        for token in ["a", "b", "c", "d"] { cache.keep(sampleRegistration(token), readAt: generation) }
        #expect(cache.count <= 3)
        #expect(cache.registration(token: "d")?.token == "d")
        cache.forgetAll()
        #expect(cache.count == 0)
    }
}
