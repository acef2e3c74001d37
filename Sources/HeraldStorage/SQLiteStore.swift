import Foundation
import GRDB
import GRDBSQLite
public import HeraldCore
import Synchronization

/// The embedded store: one SQLite database in WAL mode, written through GRDB.
///
/// A transaction that returned is in the write-ahead log, so it survives the process
/// being killed (`synchronous=NORMAL`; a power loss may lose the last moments).
public final class SQLiteStore: HeraldStore {
    private let pool: DatabasePool
    /// Every write goes through it: writes that come together share a transaction.
    private let commits: GroupCommit
    /// A connection of its own for moving the write-ahead log into the database file
    /// (`checkpoint()`), so that a writer does not pay for it inside a transaction.
    private let checkpointer: DatabaseQueue
    /// The last shared stanza the expiry sweep looked at (`deleteExpired`).
    private let stanzaSweepPosition = Mutex<Int64>(0)
    /// Registrations looked up by token. Only this store changes registration rows; the
    /// command line, from another process, may delete a project, which bumps the
    /// credentials revision the server polls: seeing it move empties the cache.
    let registrations = RegistrationCache(capacity: 32_768)
    private let lastCredentialsRevision = Mutex<Int64?>(nil)

    /// How many log pages a writer lets accumulate before it checkpoints itself: only
    /// reached when nothing calls `checkpoint()` often enough.
    static let automaticCheckpointPages = 16_384

    /// Opens (creating and migrating if needed) the database at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.automaticCheckpointPages)")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        commits = GroupCommit(pool: pool)
        try Self.migrator.migrate(pool)
        var checkpointing = Configuration()
        checkpointing.busyMode = .timeout(10)
        checkpointer = try DatabaseQueue(path: path, configuration: checkpointing)
    }

    /// Copies committed log pages into the database file without waiting for readers or
    /// the writer (a passive checkpoint).
    public func checkpoint() async throws {
        try await checkpointer.writeWithoutTransaction { db in
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
        }
    }

    /// Opens the store kept in a data directory, creating the directory if needed; the
    /// directory and its files are readable by their owner alone (`PrivateDirectory`).
    public convenience init(dataDirectory: String) throws {
        try PrivateDirectory.prepare(dataDirectory)
        try self.init(path: (dataDirectory as NSString).appendingPathComponent("herald.sqlite"))
        // The database made its log and shared-memory files while opening.
        try PrivateDirectory.restrict(dataDirectory)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-projects-credentials-messages") { db in
            try db.execute(
                sql: """
                    CREATE TABLE projects (
                        id TEXT PRIMARY KEY NOT NULL,
                        number INTEGER NOT NULL UNIQUE,
                        api_key TEXT NOT NULL UNIQUE,
                        server_key TEXT NOT NULL UNIQUE,
                        created_at INTEGER NOT NULL,
                        settings TEXT NOT NULL
                    );
                    CREATE TABLE service_account_keys (
                        id TEXT PRIMARY KEY NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        client_email TEXT NOT NULL,
                        public_key_pem TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        revoked_at INTEGER
                    );
                    CREATE INDEX service_account_keys_project ON service_account_keys(project_id);
                    CREATE TABLE secrets (name TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);
                    CREATE TABLE counters (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                    INSERT INTO counters (name, value) VALUES ('credentials_revision', 0);
                    CREATE TABLE messages (
                        id TEXT PRIMARY KEY NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        target_kind TEXT NOT NULL,
                        target TEXT NOT NULL,
                        body TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL
                    );
                    CREATE INDEX messages_project ON messages(project_id);
                    """)
        }
        migrator.registerMigration("v2-devices-registrations-queues") { db in
            try db.execute(
                sql: """
                    CREATE TABLE devices (
                        android_id INTEGER PRIMARY KEY NOT NULL,
                        security_token INTEGER NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE registrations (
                        token TEXT PRIMARY KEY NOT NULL,
                        kind TEXT NOT NULL,
                        project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
                        sender TEXT NOT NULL,
                        app_id TEXT NOT NULL,
                        subtype TEXT,
                        platform TEXT NOT NULL,
                        android_id INTEGER NOT NULL REFERENCES devices(android_id) ON DELETE CASCADE,
                        installation_id TEXT,
                        p256dh BLOB,
                        auth BLOB,
                        coding TEXT,
                        created_at INTEGER NOT NULL
                    );
                    CREATE INDEX registrations_device ON registrations(android_id);
                    CREATE INDEX registrations_installation ON registrations(project_id, installation_id);
                    CREATE TABLE installations (
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        fid TEXT NOT NULL,
                        app_id TEXT NOT NULL,
                        refresh_token TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (project_id, fid)
                    );
                    CREATE TABLE device_queue (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        android_id INTEGER NOT NULL,
                        token TEXT NOT NULL,
                        persistent_id TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        stanza BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        UNIQUE (android_id, persistent_id)
                    );
                    CREATE INDEX device_queue_device ON device_queue(android_id, sequence);
                    """)
        }
        migrator.registerMigration("v3-delivery-semantics") { db in
            try db.execute(
                sql: """
                    ALTER TABLE device_queue ADD COLUMN collapse_key TEXT;
                    ALTER TABLE device_queue ADD COLUMN is_high_priority INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE device_queue ADD COLUMN app_id TEXT NOT NULL DEFAULT '';
                    ALTER TABLE device_queue ADD COLUMN analytics_label TEXT NOT NULL DEFAULT '';
                    ALTER TABLE device_queue ADD COLUMN deleted_count INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX device_queue_token ON device_queue(token, sequence);
                    CREATE INDEX device_queue_expiry ON device_queue(expires_at);
                    ALTER TABLE registrations ADD COLUMN deleted_at INTEGER;
                    ALTER TABLE devices ADD COLUMN last_connected_at INTEGER;
                    CREATE TABLE delivery_stats (
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        day TEXT NOT NULL,
                        app_id TEXT NOT NULL,
                        label TEXT NOT NULL,
                        counter TEXT NOT NULL,
                        value INTEGER NOT NULL,
                        PRIMARY KEY (project_id, day, app_id, label, counter)
                    );
                    """)
        }
        migrator.registerMigration("v4-topics-fanouts-groups") { db in
            try db.execute(
                sql: """
                    CREATE TABLE topic_subscriptions (
                        token TEXT NOT NULL REFERENCES registrations(token) ON DELETE CASCADE,
                        topic TEXT NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (token, topic)
                    );
                    CREATE INDEX topic_subscriptions_topic ON topic_subscriptions(project_id, topic, token);
                    CREATE TABLE fanouts (
                        message_id TEXT PRIMARY KEY NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        audience_kind TEXT NOT NULL,
                        audience TEXT NOT NULL,
                        body TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        state TEXT NOT NULL,
                        cursor TEXT NOT NULL,
                        delivered INTEGER NOT NULL
                    );
                    CREATE INDEX fanouts_state ON fanouts(state, created_at);
                    CREATE TABLE device_groups (
                        notification_key TEXT PRIMARY KEY NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        members TEXT NOT NULL,
                        UNIQUE (project_id, name)
                    );
                    CREATE INDEX registrations_project ON registrations(project_id, token);
                    """)
        }
        migrator.registerMigration("v5-message-expiry") { db in
            try db.execute(sql: "CREATE INDEX messages_expiry ON messages(expires_at)")
        }
        migrator.registerMigration("v6-queue-device-keys") { db in
            // Queue rows are found through their device only: random keys such as tokens make
            // every insert touch another index page, which a fanout writing thousands of rows
            // per second pays for in pages written. An app instance's rows are few, so they
            // are picked out of their device's rows by token or persistent id.
            try db.execute(
                sql: """
                    CREATE TABLE device_queue_new (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        android_id INTEGER NOT NULL,
                        token TEXT NOT NULL,
                        persistent_id TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        stanza BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        collapse_key TEXT,
                        is_high_priority INTEGER NOT NULL DEFAULT 0,
                        app_id TEXT NOT NULL DEFAULT '',
                        analytics_label TEXT NOT NULL DEFAULT '',
                        deleted_count INTEGER NOT NULL DEFAULT 0
                    );
                    INSERT INTO device_queue_new
                        (sequence, android_id, token, persistent_id, message_id, project_id, stanza, created_at,
                         expires_at, collapse_key, is_high_priority, app_id, analytics_label, deleted_count)
                        SELECT sequence, android_id, token, persistent_id, message_id, project_id, stanza, created_at,
                            expires_at, collapse_key, is_high_priority, app_id, analytics_label, deleted_count
                        FROM device_queue;
                    DROP TABLE device_queue;
                    ALTER TABLE device_queue_new RENAME TO device_queue;
                    CREATE INDEX device_queue_device ON device_queue(android_id, sequence);
                    CREATE INDEX device_queue_expiry ON device_queue(expires_at);
                    """)
        }
        migrator.registerMigration("v7-fanout-first-devices") { db in
            try db.execute(
                sql: """
                    ALTER TABLE fanouts ADD COLUMN first_devices TEXT NOT NULL DEFAULT '';
                    ALTER TABLE fanouts ADD COLUMN first_done INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("v8-fanout-pages-by-device") { db in
            // Fanout pages are read in device order (`FanoutPosition`), so subscriptions carry
            // their registration's device and both audience indexes order by it.
            try db.execute(
                sql: """
                    ALTER TABLE topic_subscriptions ADD COLUMN android_id INTEGER NOT NULL DEFAULT 0;
                    UPDATE topic_subscriptions SET android_id =
                        (SELECT android_id FROM registrations WHERE registrations.token = topic_subscriptions.token);
                    DROP INDEX topic_subscriptions_topic;
                    CREATE INDEX topic_subscriptions_topic ON topic_subscriptions(project_id, topic, android_id, token);
                    DROP INDEX registrations_project;
                    CREATE INDEX registrations_project ON registrations(project_id, android_id, token);
                    """)
        }
        migrator.registerMigration("v9-shared-queue-stanzas") { db in
            // A fanout page's app instances of one app get the same stanza, more than half of
            // a row's bytes: it is stored once and their rows point at it (`SharedStanzas`).
            // A stanza goes when no row points at it any more (`deleteExpired`).
            try db.execute(
                sql: """
                    CREATE TABLE queue_stanzas (id INTEGER PRIMARY KEY, stanza BLOB NOT NULL);
                    ALTER TABLE device_queue ADD COLUMN stanza_id INTEGER;
                    CREATE INDEX device_queue_stanza ON device_queue(stanza_id) WHERE stanza_id IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v10-receipts") { db in
            // Which device's impression or open of a message was counted: each counts once.
            try db.execute(
                sql: """
                    CREATE TABLE receipts (
                        message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                        android_id INTEGER NOT NULL,
                        counter TEXT NOT NULL,
                        PRIMARY KEY (message_id, android_id, counter)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }

    // MARK: Projects

    public func createProject(_ project: Project, firstKey: ServiceAccountKey) async throws {
        let settings = try StoreCoding.encode(project.settings)
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO projects (id, number, api_key, server_key, created_at, settings)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    project.id, project.number, project.apiKey, project.serverKey, project.createdAt.milliseconds,
                    settings,
                ])
            try Self.insert(firstKey, db)
            try Self.bumpRevision(db)
        }
    }

    public func project(id: String) async throws -> Project? {
        try read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM projects WHERE id = ?", arguments: [id]).map(Self.project)
        }
    }

    public func projects() async throws -> [Project] {
        try read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM projects ORDER BY id").map(Self.project)
        }
    }

    public func updateSettings(_ settings: ProjectSettings, projectID: String) async throws -> Bool {
        let encoded = try StoreCoding.encode(settings)
        return try await write { db in
            try db.executeCached(sql: "UPDATE projects SET settings = ? WHERE id = ?", arguments: [encoded, projectID])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }

    public func deleteProject(id: String) async throws -> Bool {
        defer { registrations.forgetAll() }
        return try await write { db in
            try db.executeCached(sql: "DELETE FROM projects WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }

    // MARK: Keys

    public func addServiceAccountKey(_ key: ServiceAccountKey) async throws {
        try await write { db in
            guard
                try Bool.fetchOne(cached: db, sql: "SELECT 1 FROM projects WHERE id = ?", arguments: [key.projectID])
                    != nil
            else { throw StoreError.notFound("project \(key.projectID)") }
            try Self.insert(key, db)
            try Self.bumpRevision(db)
        }
    }

    public func serviceAccountKey(id: String) async throws -> ServiceAccountKey? {
        try read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM service_account_keys WHERE id = ?", arguments: [id])
                .map(Self.key)
        }
    }

    public func serviceAccountKeys(projectID: String) async throws -> [ServiceAccountKey] {
        try read { db in
            try Row.fetchAll(
                cached: db, sql: "SELECT * FROM service_account_keys WHERE project_id = ? ORDER BY created_at, id",
                arguments: [projectID]
            ).map(Self.key)
        }
    }

    public func allServiceAccountKeys() async throws -> [ServiceAccountKey] {
        try read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM service_account_keys ORDER BY created_at, id").map(
                Self.key)
        }
    }

    public func revokeServiceAccountKey(id: String, at time: Timestamp) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE service_account_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                arguments: [time.milliseconds, id])
            guard db.changesCount > 0 else { return false }
            try Self.bumpRevision(db)
            return true
        }
    }

    public func credentialsRevision() async throws -> Int64 {
        let revision = try read { db in
            try Int64.fetchOne(cached: db, sql: "SELECT value FROM counters WHERE name = 'credentials_revision'") ?? 0
        }
        let moved = lastCredentialsRevision.withLock { last in
            defer { last = revision }
            return last != nil && last != revision
        }
        if moved { registrations.forgetAll() }
        return revision
    }

    // MARK: Secrets

    public func secret(named name: String, orCreate make: @escaping @Sendable () -> [UInt8]) async throws -> [UInt8] {
        try await write { db in
            if let existing = try Data.fetchOne(
                cached: db, sql: "SELECT value FROM secrets WHERE name = ?", arguments: [name])
            {
                return Array(existing)
            }
            let value = make()
            try db.executeCached(
                sql: "INSERT INTO secrets (name, value) VALUES (?, ?)", arguments: [name, Data(value)])
            return value
        }
    }

    public func rotateSecret(named name: String, to value: [UInt8], at time: Timestamp) async throws {
        try await write { db in
            let current =
                try Data.fetchOne(cached: db, sql: "SELECT value FROM secrets WHERE name = ?", arguments: [name])
                ?? Data()
            for (key, stored) in [
                (name + SecretRotation.previousSuffix, current),
                (name + SecretRotation.rotatedAtSuffix, Data(SecretRotation.encode(time))),
                (name, Data(value)),
            ] {
                try db.executeCached(
                    sql: "INSERT OR REPLACE INTO secrets (name, value) VALUES (?, ?)", arguments: [key, stored])
            }
            try Self.bumpRevision(db)
        }
    }

    // MARK: Messages

    public func appendMessages(
        _ messages: [StoredMessage], queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        try await write(short: Self.isShort(messages.count + queue.count)) { db in
            for message in messages {
                try db.executeCached(
                    sql: """
                        INSERT INTO messages (id, project_id, target_kind, target, body, created_at, expires_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        message.id, message.projectID, message.targetKind, message.target, message.body,
                        message.createdAt.milliseconds, message.expiresAt.milliseconds,
                    ])
            }
            let (decisions, counted) = try Self.enqueue(queue, limits: limits, stats: stats, db)
            try Self.record(counted, db)
            return decisions
        }
    }

    /// Joins entries to their queues as `QueuePolicy` decides; answers the decisions and
    /// `stats` plus what they collapsed or dropped.
    private static func enqueue(_ queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat], _ db: Database)
        throws -> ([Enqueued], [DeliveryStat])
    {
        var decisions: [Enqueued] = []
        decisions.reserveCapacity(queue.count)
        var counted = stats
        // The batch's entries by device. A pending row is compared in place with the entries
        // of its device: its token picks the queue it belongs to, and its persistent id matters
        // only when an entry has the same one. A fanout page's devices hold several pending
        // rows each once a topic has sent a few messages; making strings of their tokens and
        // ids cost more than reading them.
        var incoming: [Int64: [Int]] = [:]
        // By index: a loop over the entries themselves copies each whole entry.
        for index in queue.indices {
            incoming[Int64(bitPattern: queue[index].androidID), default: []].append(index)
        }
        // Each entry's queue, kept at the index of the batch's first entry with its device and
        // token, so that a page of thousands of tokens is not hashed again and again.
        var owners = Array(queue.indices)
        var sharers = Array(repeating: 1, count: queue.count)
        var sameDevice = Array(repeating: 1, count: queue.count)
        for indices in incoming.values where indices.count > 1 {
            for index in indices {
                owners[index] = indices.first { queue[$0].token == queue[index].token } ?? index
                sameDevice[index] = indices.count
            }
            for index in indices where owners[index] != index { sharers[owners[index]] += 1 }
        }
        var current = Array(repeating: [QueuedMessage](), count: queue.count)
        // Persistent ids are unique per device; the device's rows are read here anyway. Only
        // a device with several entries in the batch, or a pending row with an entry's id,
        // can repeat one, so only then are ids kept here.
        struct DeviceMessage: Hashable {
            var androidID: UInt64
            var persistentID: String
        }
        var taken: Set<DeviceMessage> = []
        try Self.forEachRow(
            db, "SELECT \(Self.admissionColumns) FROM device_queue WHERE android_id IN (?) ORDER BY sequence",
            of: Array(incoming.keys)
        ) { row in
            guard let entries = incoming[row.int64(1)] else { return }
            for index in entries where row.text(3, equals: queue[index].persistentID) {
                taken.insert(DeviceMessage(androidID: queue[index].androidID, persistentID: queue[index].persistentID))
            }
            guard let owner = entries.first(where: { row.text(2, equals: queue[$0].token) }) else { return }
            current[owners[owner]].append(Self.pending(row, token: queue[owner].token))
        }
        let delete = try db.cachedStatement(sql: "DELETE FROM device_queue WHERE sequence = ?")
        var shared = SharedStanzas(queue)
        for index in queue.indices {
            let owner = owners[index]
            var admission = QueueAdmission(queue[index], current: current[owner], limits: limits)
            if !admission.decision.delete.isEmpty {
                for sequence in admission.decision.delete { try delete.execute(arguments: [sequence]) }
                current[owner].removeAll { admission.decision.delete.contains($0.sequence) }
            }
            // Taken over, so that setting the sequences changes the rows in place.
            var stored = admission.inserts
            admission.inserts = []
            let checked = !taken.isEmpty || sameDevice[index] > 1 || stored.count > 1
            for row in stored.indices {
                if checked {
                    let key = DeviceMessage(androidID: stored[row].androidID, persistentID: stored[row].persistentID)
                    guard taken.insert(key).inserted else {
                        throw StoreError.conflict("persistent id \(stored[row].persistentID)")
                    }
                }
                stored[row].sequence = try insert(stored[row], stanzaID: shared.id(of: stored[row].stanza, db), db)
            }
            // Later entries of the same queue see what this one stored.
            if sharers[owner] > 1 { current[owner] += stored }
            counted += admission.stats
            decisions.append(Enqueued(decision: admission.decision, stored: stored))
        }
        return (decisions, counted)
    }

    /// Runs `sql`, whose one `IN (?)` takes `values`, in chunks of 500 values (well under
    /// SQLite's limit on bound parameters), and hands every row to `body`. `before` and
    /// `after` bind the statement's other parameters, around the `IN` list.
    private static func forEachRow(
        _ db: Database, _ sql: String, before: [any DatabaseValueConvertible] = [],
        of values: [some DatabaseValueConvertible], after: [any DatabaseValueConvertible] = [],
        _ body: (ColumnReader) throws -> Void
    ) throws {
        for start in stride(from: 0, to: values.count, by: 500) {
            var chunk: [any DatabaseValueConvertible] = Array(values[start..<min(start + 500, values.count)])
            // Lists are padded with their last value to a power of two (or 500), so that a
            // statement compiled once serves every list of its size class.
            let size = min(500, 1 << (Int.bitWidth - (chunk.count - 1).leadingZeroBitCount))
            chunk += Array(repeating: chunk[chunk.count - 1], count: size - chunk.count)
            let marks = Array(repeating: "?", count: size).joined(separator: ", ")
            try db.forEachCached(
                sql: sql.replacingOccurrences(of: "IN (?)", with: "IN (\(marks))"),
                arguments: StatementArguments(before + chunk + after), body)
        }
    }

    /// Inserts a queue entry; answers its sequence number. The values are bound with
    /// SQLite's own calls: a fanout inserts hundreds of thousands of rows, and building
    /// an argument array per row cost more than SQLite's work.
    /// A stanza that other rows share is stored once, as `stanzaID`, and the row's own is empty.
    @discardableResult
    private static func insert(_ entry: QueuedMessage, stanzaID: Int64? = nil, _ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO device_queue
                    (android_id, token, persistent_id, message_id, project_id, stanza, created_at, expires_at,
                     collapse_key, is_high_priority, app_id, analytics_label, deleted_count, stanza_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        return try statement.insert { handle in
            sqlite3_bind_int64(handle, 1, Int64(bitPattern: entry.androidID))
            bindText(handle, 2, entry.token)
            bindText(handle, 3, entry.persistentID)
            bindText(handle, 4, entry.messageID)
            bindText(handle, 5, entry.projectID)
            bindBlob(handle, 6, stanzaID == nil ? entry.stanza : [])
            sqlite3_bind_int64(handle, 7, entry.createdAt.milliseconds)
            sqlite3_bind_int64(handle, 8, entry.expiresAt.milliseconds)
            if let key = entry.collapseKey { bindText(handle, 9, key) } else { sqlite3_bind_null(handle, 9) }
            sqlite3_bind_int64(handle, 10, entry.isHighPriority ? 1 : 0)
            bindText(handle, 11, entry.appID)
            bindText(handle, 12, entry.analyticsLabel)
            sqlite3_bind_int64(handle, 13, Int64(entry.deletedCount))
            if let stanzaID { sqlite3_bind_int64(handle, 14, stanzaID) } else { sqlite3_bind_null(handle, 14) }
        }
    }

    private static func bindBlob(_ handle: SQLiteStatement, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob(
                handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count),
                Self.transient)
        }
    }

    /// The stanzas that several entries of one batch share, each stored once in
    /// `queue_stanzas` when its first entry is inserted. A fanout page's app instances of one
    /// app get the same bytes (web push ones are sealed for each and stay in their rows).
    private struct SharedStanzas {
        /// What finds a stanza's equals without hashing all of it: its length and last bytes
        /// (where a sealed payload's random bytes are).
        private struct Key: Hashable {
            var count: Int
            var tail: UInt64
            init(_ stanza: [UInt8]) {
                count = stanza.count
                tail = stanza.suffix(8).reduce(0) { $0 << 8 | UInt64($1) }
            }
        }
        private struct Group {
            var stanza: [UInt8]
            var entries = 0
            var id: Int64?
        }
        private var groups: [Key: [Group]] = [:]

        init(_ queue: [QueuedMessage]) {
            for stanza in queue.lazy.map(\.stanza) {
                let key = Key(stanza)
                if let index = groups[key]?.firstIndex(where: { $0.stanza == stanza }) {
                    groups[key]![index].entries += 1
                } else {
                    groups[key, default: []].append(Group(stanza: stanza, entries: 1))
                }
            }
        }

        /// The shared row of `stanza`, stored now if it is not yet; nil when no other entry
        /// of the batch has the same stanza (or it is not one of the batch's).
        mutating func id(of stanza: [UInt8], _ db: Database) throws -> Int64? {
            let key = Key(stanza)
            guard let index = groups[key]?.firstIndex(where: { $0.stanza == stanza }),
                groups[key]![index].entries > 1
            else { return nil }
            if let id = groups[key]![index].id { return id }
            let id = try db.cachedStatement(sql: "INSERT INTO queue_stanzas (stanza) VALUES (?)").insert {
                bindBlob($0, 1, stanza)
            }
            groups[key]![index].id = id
            return id
        }
    }

    /// SQLite copies the bound value.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func bindText(_ handle: SQLiteStatement, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { characters in
                // An empty string still needs a pointer; SQLite reads no byte of it.
                if let start = characters.baseAddress {
                    _ = sqlite3_bind_text(handle, index, start, Int32(characters.count), Self.transient)
                } else {
                    _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
                }
            }
        }
    }

    /// Deletes the queue rows `condition` selects; answers how many went and the counter
    /// keys of those that were messages (a "messages deleted" signal counts nothing). What
    /// the counters need comes back with the delete, so no stanza is read.
    private static func deleteQueued(where condition: String, _ arguments: StatementArguments, _ db: Database)
        throws -> (count: Int, messages: [DeliveryStatKey])
    {
        var count = 0
        var messages: [DeliveryStatKey] = []
        try db.forEachCached(
            sql: """
                DELETE FROM device_queue WHERE \(condition)
                RETURNING project_id, created_at, app_id, analytics_label, deleted_count
                """,
            arguments: arguments
        ) { row in
            count += 1
            if row.int64(4) == 0 {
                messages.append(
                    DeliveryStatKey(
                        projectID: row.text(0), at: Timestamp(milliseconds: row.int64(1)), appID: row.text(2),
                        label: row.text(3)))
            }
        }
        return (count, messages)
    }

    private static func record(_ stats: [DeliveryStat], _ db: Database) throws {
        for (key, counter, amount) in StoreCoding.totals(stats) {
            try db.executeCached(
                sql: """
                    INSERT INTO delivery_stats (project_id, day, app_id, label, counter, value)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (project_id, day, app_id, label, counter) DO UPDATE SET value = value + excluded.value
                    """,
                arguments: [key.projectID, key.day, key.appID, key.label, counter.rawValue, amount])
        }
    }

    /// The queue columns in the order `queued(_:)` reads them by position (faster than by
    /// name), `stanza` standing for the row's stanza.
    static func queueColumns(stanza: String) -> String {
        """
        sequence, android_id, token, persistent_id, message_id, project_id, \(stanza), created_at, expires_at, \
        collapse_key, is_high_priority, app_id, analytics_label, deleted_count
        """
    }

    /// A row's own stanza, or the one it shares.
    static let queueColumns = queueColumns(
        stanza: """
            CASE WHEN stanza_id IS NULL THEN stanza \
            ELSE (SELECT queue_stanzas.stanza FROM queue_stanzas WHERE queue_stanzas.id = stanza_id) END
            """)

    /// The queue columns with an empty stanza: what admitting a message looks at, without
    /// reading every pending message's payload for each new one.
    static let admissionColumns = queueColumns(stanza: "X''")

    /// A pending row read with `admissionColumns`, as admitting another entry sees it: the
    /// token is the caller's, and neither its persistent id nor its message id is read.
    private static func pending(_ row: ColumnReader, token: String) -> QueuedMessage {
        QueuedMessage(
            sequence: row.int64(0), androidID: UInt64(bitPattern: row.int64(1)), token: token, persistentID: "",
            messageID: "", projectID: row.text(5), stanza: [], createdAt: Timestamp(milliseconds: row.int64(7)),
            expiresAt: Timestamp(milliseconds: row.int64(8)), collapseKey: row.optionalText(9),
            isHighPriority: row.int64(10) != 0, appID: row.text(11), analyticsLabel: row.text(12),
            deletedCount: Int(row.int64(13)))
    }

    private static func queued(_ row: ColumnReader) -> QueuedMessage {
        QueuedMessage(
            sequence: row.int64(0), androidID: UInt64(bitPattern: row.int64(1)), token: row.text(2),
            persistentID: row.text(3), messageID: row.text(4), projectID: row.text(5), stanza: row.bytes(6) ?? [],
            createdAt: Timestamp(milliseconds: row.int64(7)), expiresAt: Timestamp(milliseconds: row.int64(8)),
            collapseKey: row.optionalText(9), isHighPriority: row.int64(10) != 0, appID: row.text(11),
            analyticsLabel: row.text(12), deletedCount: Int(row.int64(13)))
    }

    public func message(id: String) async throws -> StoredMessage? {
        try read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM messages WHERE id = ?", arguments: [id]).map { row in
                StoredMessage(
                    id: row["id"], projectID: row["project_id"], targetKind: row["target_kind"], target: row["target"],
                    body: row["body"], createdAt: Timestamp(milliseconds: row["created_at"]),
                    expiresAt: Timestamp(milliseconds: row["expires_at"]))
            }
        }
    }

    public func messageCount(projectID: String) async throws -> Int {
        try read { db in
            try Int.fetchOne(
                cached: db, sql: "SELECT COUNT(*) FROM messages WHERE project_id = ?", arguments: [projectID]) ?? 0
        }
    }

    // MARK: Devices and registrations

    public func createDevice(_ device: Device) async throws {
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO devices (android_id, security_token, created_at) VALUES (?, ?, ?)",
                arguments: [
                    Int64(bitPattern: device.androidID), Int64(bitPattern: device.securityToken),
                    device.createdAt.milliseconds,
                ])
        }
    }

    public func device(androidID: UInt64) async throws -> Device? {
        try read { db in
            try Row.fetchOne(
                cached: db, sql: "SELECT * FROM devices WHERE android_id = ?", arguments: [Int64(bitPattern: androidID)]
            ).map { row in
                Device(
                    androidID: UInt64(bitPattern: row["android_id"]),
                    securityToken: UInt64(bitPattern: row["security_token"]),
                    createdAt: Timestamp(milliseconds: row["created_at"]),
                    lastConnectedAt: (row["last_connected_at"] as Int64?).map { Timestamp(milliseconds: $0) })
            }
        }
    }

    public func createRegistration(_ registration: Registration) async throws {
        defer { registrations.forget(token: registration.token) }
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO registrations (token, kind, project_id, sender, app_id, subtype, platform, android_id,
                        installation_id, p256dh, auth, coding, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    registration.token, registration.kind.rawValue, registration.projectID, registration.sender,
                    registration.appID, registration.subtype, registration.platform.rawValue,
                    Int64(bitPattern: registration.androidID), registration.installationID,
                    registration.webKeys.map { Data($0.p256dh) }, registration.webKeys.map { Data($0.auth) },
                    registration.webKeys?.coding, registration.createdAt.milliseconds,
                ])
        }
    }

    public func registration(token: String) async throws -> Registration? {
        if let known = registrations.registration(token: token) { return known }
        let generation = registrations.generation
        let found = try read { db in
            try db.fetchAllCached(
                sql: "SELECT \(Self.registrationColumns) FROM registrations WHERE token = ?", arguments: [token],
                Self.registration
            ).first
        }
        if let found { registrations.keep(found, readAt: generation) }
        return found
    }

    public func registration(installationID: String, projectID: String) async throws -> Registration? {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.registrationColumns) FROM registrations WHERE project_id = ? AND installation_id = ?
                    ORDER BY created_at DESC, token DESC LIMIT 1
                    """,
                arguments: [projectID, installationID], Self.registration
            ).first
        }
    }

    public func registrations(androidID: UInt64) async throws -> [Registration] {
        try read { db in
            try db.fetchAllCached(
                sql:
                    "SELECT \(Self.registrationColumns) FROM registrations WHERE android_id = ? AND deleted_at IS NULL ORDER BY token",
                arguments: [Int64(bitPattern: androidID)], Self.registration)
        }
    }

    public func deleteRegistration(token: String, at time: Timestamp) async throws -> Registration? {
        defer { registrations.forget(token: token) }
        return try await write { db in
            guard
                var registration = try db.fetchAllCached(
                    sql: "SELECT \(Self.registrationColumns) FROM registrations WHERE token = ? AND deleted_at IS NULL",
                    arguments: [token], Self.registration
                ).first
            else { return nil }
            registration.deletedAt = time
            try db.executeCached(
                sql: "UPDATE registrations SET deleted_at = ? WHERE token = ?", arguments: [time.milliseconds, token])
            let discarded = try Self.deleteQueued(
                where: "android_id = ? AND token = ?", [Int64(bitPattern: registration.androidID), token], db)
            try Self.record(discarded.messages.map { DeliveryStat($0, .unregistered) }, db)
            return registration
        }
    }

    public func lastConnections(androidIDs: [UInt64]) async throws -> [UInt64: Timestamp?] {
        guard !androidIDs.isEmpty else { return [:] }
        return try read { db in
            var result: [UInt64: Timestamp?] = [:]
            try Self.forEachRow(
                db, "SELECT android_id, last_connected_at FROM devices WHERE android_id IN (?)",
                of: androidIDs.map { Int64(bitPattern: $0) }
            ) { row in
                result[UInt64(bitPattern: row.int64(0))] = row.optionalInt64(1).map { Timestamp(milliseconds: $0) }
            }
            return result
        }
    }

    public func recordConnection(androidID: UInt64, at time: Timestamp) async throws {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE devices SET last_connected_at = ? WHERE android_id = ?",
                arguments: [time.milliseconds, Int64(bitPattern: androidID)])
        }
    }

    public func createInstallation(_ installation: Installation) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT OR IGNORE INTO installations (project_id, fid, app_id, refresh_token, created_at)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    installation.projectID, installation.fid, installation.appID, installation.refreshToken,
                    installation.createdAt.milliseconds,
                ])
            return db.changesCount == 1
        }
    }

    public func installation(fid: String, projectID: String) async throws -> Installation? {
        try read { db in
            try Row.fetchOne(
                cached: db, sql: "SELECT * FROM installations WHERE project_id = ? AND fid = ?",
                arguments: [projectID, fid]
            ).map { row in
                Installation(
                    fid: row["fid"], projectID: row["project_id"], appID: row["app_id"],
                    refreshToken: row["refresh_token"], createdAt: Timestamp(milliseconds: row["created_at"]))
            }
        }
    }

    // MARK: Device queues

    public func pendingMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp) async throws
        -> [QueuedMessage]
    {
        try await pending(androidID: androidID, after: sequence, limit: limit, now: now, highPriorityOnly: false)
    }

    public func pendingHighPriorityMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        async throws -> [QueuedMessage]
    {
        try await pending(androidID: androidID, after: sequence, limit: limit, now: now, highPriorityOnly: true)
    }

    private func pending(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp, highPriorityOnly: Bool)
        async throws -> [QueuedMessage]
    {
        try read { db in
            try db.fetchAllCached(
                sql: """
                    SELECT \(Self.queueColumns) FROM device_queue WHERE android_id = ? AND sequence > ? AND expires_at > ?
                    \(highPriorityOnly ? "AND is_high_priority = 1" : "")
                    ORDER BY sequence LIMIT ?
                    """,
                arguments: [Int64(bitPattern: androidID), sequence, now.milliseconds, limit], Self.queued)
        }
    }

    public func acknowledge(androidID: UInt64, persistentIDs: [String]) async throws -> Int {
        try await acknowledge(batch: [androidID: persistentIDs])
    }

    public func acknowledge(batch: [UInt64: [String]]) async throws -> Int {
        guard batch.values.contains(where: { !$0.isEmpty }) else { return 0 }
        return try await write { db in
            var removed = 0
            var delivered: [DeliveryStat] = []
            for (androidID, ids) in batch {
                for id in ids {
                    let gone = try Self.deleteQueued(
                        where: "android_id = ? AND persistent_id = ?", [Int64(bitPattern: androidID), id], db)
                    removed += gone.count
                    delivered += gone.messages.map { DeliveryStat($0, .delivered) }
                }
            }
            try Self.record(delivered, db)
            return removed
        }
    }

    public func deleteExpired(now: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: "DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE expires_at <= ? LIMIT ?)",
                arguments: [now.milliseconds, limit])
            let expired = try Self.deleteQueued(
                where:
                    "sequence IN (SELECT sequence FROM device_queue WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
                [now.milliseconds, limit], db)
            try Self.record(expired.messages.map { DeliveryStat($0, .expired) }, db)
            // Shared stanzas no row points at any more (their rows were acknowledged, expired,
            // replaced or unregistered), looked for among at most `limit` of them, from where the
            // last sweep stopped: a sweep stays short however many stanzas offline queues hold.
            let start = self.stanzaSweepPosition.withLock { $0 }
            let probed = try Row.fetchOne(
                db,
                sql: "SELECT COUNT(*), MAX(id) FROM (SELECT id FROM queue_stanzas WHERE id > ? ORDER BY id LIMIT ?)",
                arguments: [start, limit])
            let (count, end): (Int, Int64) = (probed?[0] ?? 0, probed?[1] ?? start)
            try db.executeCached(
                sql: """
                    DELETE FROM queue_stanzas WHERE id > ? AND id <= ?
                    AND NOT EXISTS (SELECT 1 FROM device_queue WHERE stanza_id = queue_stanzas.id)
                    """,
                arguments: [start, end])
            self.stanzaSweepPosition.withLock { $0 = count < limit ? 0 : end }
            return expired.count
        }
    }

    public func deleteAbandonedDevices(checkedInBefore: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: """
                    DELETE FROM devices WHERE android_id IN (
                        SELECT android_id FROM devices
                        WHERE created_at < ? AND last_connected_at IS NULL
                        AND NOT EXISTS (SELECT 1 FROM registrations WHERE registrations.android_id = devices.android_id)
                        LIMIT ?)
                    """, arguments: [checkedInBefore.milliseconds, limit])
            return db.changesCount
        }
    }

    public func record(_ stats: [DeliveryStat]) async throws {
        guard !stats.isEmpty else { return }
        try await write(short: Self.isShort(stats.count)) { db in try Self.record(stats, db) }
    }

    public func recordReceipt(_ stat: DeliveryStat, messageID: String, androidID: UInt64) async throws -> Bool {
        try await write(short: true) { db in
            try db.executeCached(
                sql: "INSERT OR IGNORE INTO receipts (message_id, android_id, counter) VALUES (?, ?, ?)",
                arguments: [messageID, Int64(bitPattern: androidID), stat.counter.rawValue])
            guard db.changesCount == 1 else { return false }
            try Self.record([stat], db)
            return true
        }
    }

    public func deliveryReport(projectID: String, appID: String?, from: CalendarDay, through: CalendarDay)
        async throws -> [DeliveryReportRow]
    {
        try read { db in
            let counters = try Row.fetchAll(
                cached: db,
                sql: """
                    SELECT day, app_id, label, counter, value FROM delivery_stats
                    WHERE project_id = ? AND day >= ? AND day <= ? \(appID == nil ? "" : "AND app_id = ?")
                    """,
                arguments: StatementArguments(
                    [projectID, from.description, through.description] + (appID.map { [$0] } ?? []))
            ).map { StoreCoding.CounterRow(day: $0[0], appID: $0[1], label: $0[2], counter: $0[3], value: $0[4]) }
            let queued = try Row.fetchAll(
                cached: db,
                sql: """
                    SELECT created_at, app_id, analytics_label FROM device_queue
                    WHERE project_id = ? AND deleted_count = 0 \(appID == nil ? "" : "AND app_id = ?")
                    """,
                arguments: StatementArguments([projectID] + (appID.map { [$0] } ?? []))
            ).map { StoreCoding.PendingRow(createdAt: Timestamp(milliseconds: $0[0]), appID: $0[1], label: $0[2]) }
            return StoreCoding.report(
                projectID: projectID, counters: counters, queued: queued, from: from, through: through)
        }
    }

    public func queuedCount(androidID: UInt64) async throws -> Int {
        try read { db in
            try Int.fetchOne(
                cached: db, sql: "SELECT COUNT(*) FROM device_queue WHERE android_id = ?",
                arguments: [Int64(bitPattern: androidID)]
            ) ?? 0
        }
    }

    // MARK: Topics

    public func subscribe(_ subscription: TopicSubscription, limit: Int) async throws -> Bool {
        try await write { db in
            if try Bool.fetchOne(
                cached: db, sql: "SELECT 1 FROM topic_subscriptions WHERE token = ? AND topic = ?",
                arguments: [subscription.token, subscription.topic]) != nil
            {
                return false
            }
            let count =
                try Int.fetchOne(
                    cached: db, sql: "SELECT COUNT(*) FROM topic_subscriptions WHERE token = ?",
                    arguments: [subscription.token]
                )
                ?? 0
            guard count < limit else { throw StoreError.limit("topics per token") }
            try db.executeCached(
                sql: """
                    INSERT INTO topic_subscriptions (token, topic, project_id, created_at, android_id)
                    SELECT ?, ?, ?, ?, android_id FROM registrations WHERE token = ?
                    """,
                arguments: [
                    subscription.token, subscription.topic, subscription.projectID, subscription.createdAt.milliseconds,
                    subscription.token,
                ])
            guard db.changesCount > 0 else { throw StoreError.notFound("token") }
            return true
        }
    }

    public func unsubscribe(token: String, topic: String) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "DELETE FROM topic_subscriptions WHERE token = ? AND topic = ?", arguments: [token, topic])
            return db.changesCount > 0
        }
    }

    public func subscriptions(token: String) async throws -> [TopicSubscription] {
        try read { db in
            try Row.fetchAll(
                cached: db, sql: "SELECT * FROM topic_subscriptions WHERE token = ? ORDER BY topic", arguments: [token]
            ).map { row in
                TopicSubscription(
                    projectID: row["project_id"], token: row["token"], topic: row["topic"],
                    createdAt: Timestamp(milliseconds: row["created_at"]))
            }
        }
    }

    public func topics(ofTokens tokens: [String]) async throws -> [String: Set<String>] {
        guard !tokens.isEmpty else { return [:] }
        return try read { db in
            var result: [String: Set<String>] = [:]
            try Self.forEachRow(db, "SELECT token, topic FROM topic_subscriptions WHERE token IN (?)", of: tokens) {
                row in
                result[row.text(0), default: []].insert(row.text(1))
            }
            return result
        }
    }

    public func audience(projectID: String, topics: [String]?, after cursor: String, limit: Int) async throws
        -> [Registration]
    {
        if topics?.isEmpty == true { return [] }
        let (order, start) = Self.pageOrder(after: cursor)
        let marks = Array(repeating: "?", count: start.count).joined(separator: ", ")
        func after(_ table: String) -> String {
            start.isEmpty ? "" : "AND (\(Self.qualified(order, by: table))) > (\(marks))"
        }
        return try read { db in
            if let topics {
                // A page holds `limit` live registrations unless it is the last: the engine
                // ends a job at a short page, so unregistered app instances, whose
                // subscriptions stay, are passed over before the limit, not after it. Each
                // topic (a condition names at most five) gives its next `limit` straight off
                // the subscription index in page order; the page is the first `limit` of their
                // union, so no page sorts every subscription after the cursor.
                let arm = """
                    SELECT \(Self.qualified(Self.registrationColumns, by: "registrations")) FROM topic_subscriptions
                    JOIN registrations ON registrations.token = topic_subscriptions.token
                    WHERE topic_subscriptions.project_id = ? AND topic_subscriptions.topic = ?
                    \(after("topic_subscriptions")) AND registrations.deleted_at IS NULL
                    ORDER BY \(Self.qualified(order, by: "topic_subscriptions")) LIMIT ?
                    """
                let sql =
                    topics.count == 1
                    ? arm
                    : Array(repeating: "SELECT * FROM (\(arm))", count: topics.count).joined(separator: " UNION ")
                        + " ORDER BY \(order) LIMIT ?"
                var arguments = topics.flatMap { [projectID, $0] + start + [limit] }
                if topics.count > 1 { arguments.append(limit) }
                return try db.fetchAllCached(sql: sql, arguments: StatementArguments(arguments), Self.registration)
            }
            return try db.fetchAllCached(
                sql: """
                    SELECT \(Self.registrationColumns) FROM registrations WHERE project_id = ? AND kind = 'app' AND deleted_at IS NULL
                    \(after("registrations")) ORDER BY \(order) LIMIT ?
                    """,
                arguments: StatementArguments([projectID] + start + [limit]), Self.registration)
        }
    }

    /// The columns a page of an audience is ordered by after `cursor`, and the cursor's values
    /// for them (none at the start).
    private static func pageOrder(after cursor: String) -> (
        order: String, start: [any DatabaseValueConvertible & Sendable]
    ) {
        switch FanoutPosition(cursor: cursor) {
        case .start: ("android_id, token", [])
        case .after(let device, let token): ("android_id, token", [device, token])
        case .afterToken(let token): ("token", [token])
        }
    }

    public func audience(projectID: String, topics: [String]?, androidIDs: [UInt64]) async throws -> [Registration] {
        if topics?.isEmpty == true { return [] }
        return try read { db in
            var sql = """
                SELECT \(Self.registrationColumns) FROM registrations
                WHERE +project_id = ? AND kind = 'app' AND deleted_at IS NULL AND android_id IN (?)
                """
            // `+project_id` keeps SQLite on the device index: a page of devices is a few rows,
            // the project's registrations may be millions.
            if let topics {
                // Spelled without `IN (?)`, which `forEachRow` fills with the devices.
                let matches = Array(repeating: "topic = ?", count: topics.count).joined(separator: " OR ")
                sql += """
                     AND EXISTS (SELECT 1 FROM topic_subscriptions
                        WHERE topic_subscriptions.token = registrations.token AND (\(matches)))
                    """
            }
            var found: [Registration] = []
            try Self.forEachRow(
                db, sql, before: [projectID], of: androidIDs.map { Int64(bitPattern: $0) }, after: topics ?? []
            ) { found.append(Self.registration($0)) }
            return found.sorted { $0.token < $1.token }
        }
    }

    // MARK: Fanouts

    public func createFanout(_ message: StoredMessage, job: FanoutJob, stats: [DeliveryStat]) async throws {
        let (kind, audience) = StoreCoding.encode(job.audience)
        try await write(short: true) { db in
            try db.executeCached(
                sql: """
                    INSERT INTO messages (id, project_id, target_kind, target, body, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    message.id, message.projectID, message.targetKind, message.target, message.body,
                    message.createdAt.milliseconds, message.expiresAt.milliseconds,
                ])
            try db.executeCached(
                sql: """
                    INSERT INTO fanouts (message_id, project_id, audience_kind, audience, body, created_at, expires_at,
                        state, cursor, delivered)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    job.messageID, job.projectID, kind, audience, job.body, job.createdAt.milliseconds,
                    job.expiresAt.milliseconds, job.state.rawValue, job.cursor, job.delivered,
                ])
            try Self.record(stats, db)
        }
    }

    public func unfinishedFanouts() async throws -> [FanoutJob] {
        try read { db in
            try Row.fetchAll(
                cached: db, sql: "SELECT * FROM fanouts WHERE state != 'done' ORDER BY created_at, message_id"
            )
            .compactMap { row in
                guard let audience = StoreCoding.decodeAudience(row["audience_kind"], row["audience"]) else {
                    return nil
                }
                return FanoutJob(
                    messageID: row["message_id"], projectID: row["project_id"], audience: audience,
                    body: row["body"],
                    createdAt: Timestamp(milliseconds: row["created_at"]),
                    expiresAt: Timestamp(milliseconds: row["expires_at"]),
                    state: FanoutJob.State(rawValue: row["state"]) ?? .queued,
                    firstDevices: StoreCoding.decodeDevices(row["first_devices"]), firstDone: row["first_done"],
                    cursor: row["cursor"], delivered: row["delivered"])
            }
        }
    }

    public func storeFanoutPage(
        messageID: String, queue: [QueuedMessage], firstDone: Int, cursor: String, reached: Int, done: Bool,
        limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        try await write(short: Self.isShort(queue.count)) { db in
            let (decisions, counted) = try Self.enqueue(queue, limits: limits, stats: stats, db)
            try db.executeCached(
                sql: """
                    UPDATE fanouts SET first_done = ?, cursor = ?, delivered = delivered + ?, state = ?
                    WHERE message_id = ?
                    """,
                arguments: [firstDone, cursor, reached, done ? "done" : "running", messageID])
            guard db.changesCount > 0 else { throw StoreError.notFound("fanout \(messageID)") }
            try Self.record(counted, db)
            return decisions
        }
    }

    public func startFanout(messageID: String, firstDevices: [UInt64]) async throws -> [UInt64] {
        try await write { db in
            try db.executeCached(
                sql:
                    "UPDATE fanouts SET state = 'running', first_devices = ? WHERE message_id = ? AND state = 'queued'",
                arguments: [StoreCoding.encode(devices: firstDevices), messageID])
            let stored = try String.fetchOne(
                cached: db, sql: "SELECT first_devices FROM fanouts WHERE message_id = ?", arguments: [messageID])
            return StoreCoding.decodeDevices(stored ?? "")
        }
    }

    // MARK: Device groups

    public func createDeviceGroup(_ group: DeviceGroup) async throws {
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO device_groups (notification_key, project_id, name, members) VALUES (?, ?, ?, ?)",
                arguments: [
                    group.notificationKey, group.projectID, group.name, StoreCoding.encode(members: group.members),
                ])
        }
    }

    public func deviceGroup(projectID: String, name: String?, notificationKey: String?) async throws -> DeviceGroup? {
        try read { db in
            var sql = "SELECT * FROM device_groups WHERE project_id = ?"
            var arguments: [any DatabaseValueConvertible] = [projectID]
            if let name {
                sql += " AND name = ?"
                arguments.append(name)
            }
            if let notificationKey {
                sql += " AND notification_key = ?"
                arguments.append(notificationKey)
            }
            return try Row.fetchOne(cached: db, sql: sql + " LIMIT 1", arguments: StatementArguments(arguments)).map {
                row in
                DeviceGroup(
                    projectID: row["project_id"], name: row["name"], notificationKey: row["notification_key"],
                    members: StoreCoding.decodeMembers(row["members"]))
            }
        }
    }

    public func updateDeviceGroup(projectID: String, notificationKey: String, members: [String]) async throws {
        try await write { db in
            if members.isEmpty {
                try db.executeCached(
                    sql: "DELETE FROM device_groups WHERE project_id = ? AND notification_key = ?",
                    arguments: [projectID, notificationKey])
            } else {
                try db.executeCached(
                    sql: "UPDATE device_groups SET members = ? WHERE project_id = ? AND notification_key = ?",
                    arguments: [StoreCoding.encode(members: members), projectID, notificationKey])
            }
            guard db.changesCount > 0 else { throw StoreError.notFound("device group") }
        }
    }

    // MARK: Helpers

    /// Runs a read transaction on the calling thread. GRDB's asynchronous read hops to a
    /// reader's dispatch queue and back, two thread switches that cost more CPU than the
    /// look-ups most reads are; a synchronous read on an idle reader runs where it is called.
    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }

    /// Whether a write of this many rows is short enough to run on its caller's thread
    /// (`GroupCommit`): a send's, not a sweep's or a large fanout page's.
    private static func isShort(_ rows: Int) -> Bool { rows <= 16 }

    /// Runs a write transaction, turning constraint failures into `StoreError.conflict`,
    /// a missing parent row into `StoreError.notFound` and an interrupt into a cancellation.
    private func write<T: Sendable>(
        short: Bool = false, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        do {
            return try await commits.write(short: short, body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            // GRDB interrupts the statement of a cancelled task: to callers that is a
            // cancellation, after which they may still write what they held (nothing was).
            throw CancellationError()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            if error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
                throw StoreError.notFound(error.message ?? "referenced row")
            }
            throw StoreError.conflict(error.message ?? "unique value taken")
        }
    }

    private static func insert(_ key: ServiceAccountKey, _ db: Database) throws {
        try db.executeCached(
            sql: """
                INSERT INTO service_account_keys (id, project_id, client_email, public_key_pem, created_at, revoked_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                key.id, key.projectID, key.clientEmail, key.publicKeyPEM, key.createdAt.milliseconds,
                key.revokedAt?.milliseconds,
            ])
    }

    private static func bumpRevision(_ db: Database) throws {
        try db.executeCached(sql: "UPDATE counters SET value = value + 1 WHERE name = 'credentials_revision'")
    }

    private static func project(_ row: Row) throws -> Project {
        Project(
            id: row["id"], number: row["number"], apiKey: row["api_key"], serverKey: row["server_key"],
            createdAt: Timestamp(milliseconds: row["created_at"]),
            settings: try StoreCoding.decodeSettings(row["settings"]))
    }

    /// `columns` (a comma-separated list) each prefixed with `table`. The lists are a few
    /// fixed ones and every fanout page asks again, so each answer is kept.
    static func qualified(_ columns: String, by table: String) -> String {
        let key = table + "\u{0}" + columns
        if let known = qualifiedLists.withLock({ $0[key] }) { return known }
        let made = columns.split(separator: ",").map {
            "\(table)." + $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        .joined(separator: ", ")
        qualifiedLists.withLock { $0[key] = made }
        return made
    }

    private static let qualifiedLists = Mutex<[String: String]>([:])

    /// The registration columns in the order `registration(_:)` reads them by position.
    static let registrationColumns = """
        token, kind, project_id, sender, app_id, subtype, platform, android_id, installation_id, p256dh, auth, coding, \
        created_at, deleted_at
        """

    private static func registration(_ row: ColumnReader) -> Registration {
        var keys: WebPushKeys?
        if let p256dh = row.bytes(9), let auth = row.bytes(10) {
            keys = WebPushKeys(p256dh: p256dh, auth: auth, coding: row.optionalText(11) ?? "aesgcm")
        }
        return Registration(
            token: row.text(0), kind: Registration.Kind(rawValue: row.text(1)) ?? .app, projectID: row.optionalText(2),
            sender: row.text(3), appID: row.text(4), subtype: row.optionalText(5),
            platform: Platform(rawValue: row.text(6)) ?? .android, androidID: UInt64(bitPattern: row.int64(7)),
            installationID: row.optionalText(8), webKeys: keys, createdAt: Timestamp(milliseconds: row.int64(12)),
            deletedAt: row.optionalInt64(13).map { Timestamp(milliseconds: $0) })
    }

    private static func key(_ row: Row) -> ServiceAccountKey {
        ServiceAccountKey(
            id: row["id"], projectID: row["project_id"], clientEmail: row["client_email"],
            publicKeyPEM: row["public_key_pem"], createdAt: Timestamp(milliseconds: row["created_at"]),
            revokedAt: (row["revoked_at"] as Int64?).map { Timestamp(milliseconds: $0) })
    }
}

/// Statements compiled once per connection and kept. Compiling is a good part of a short
/// statement's cost (GRDB also walks every column the statement reads to learn what it
/// touches), and Herald's statements are few: the SQL of each call is fixed, or one of a
/// few shapes.
extension Database {
    fileprivate func executeCached(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

extension Row {
    fileprivate static func fetchAll(
        cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Row] {
        try fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    fileprivate static func fetchOne(
        cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Row? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

extension DatabaseValueConvertible {
    fileprivate static func fetchOne(
        cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

/// One row of a statement being stepped, read with SQLite's own column calls. GRDB's `Row`
/// first copies every value of a row into a container of its own; for the pages of
/// registrations and queue rows a fanout reads, that copy cost more than SQLite's search.
/// Valid only until the statement steps again.
struct ColumnReader {
    let handle: SQLiteStatement

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func text(_ column: Int32) -> String {
        // The pointer first, then the length, as SQLite asks.
        guard let start = sqlite3_column_text(handle, column) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column))),
            as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// Whether a text column holds `value`, compared without making a string of it.
    func text(_ column: Int32, equals value: String) -> Bool {
        let start = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return value.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count == count else { return false }
            guard count > 0, let start, let base = bytes.baseAddress else { return count == 0 }
            return memcmp(start, base, count) == 0
        } ?? (text(column) == value)
    }

    /// The bytes of a blob column; nil for NULL.
    func bytes(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        guard let start = sqlite3_column_blob(handle, column) else { return [] }
        return Array(
            UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column))))
    }
}

extension Statement {
    /// Runs this insert with the values `bind` sets through SQLite's own calls, and resets;
    /// answers the new row's id.
    fileprivate func insert(_ bind: (SQLiteStatement) -> Void) throws -> Int64 {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        bind(handle)
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))),
                sql: sql)
        }
        return sqlite3_last_insert_rowid(sqlite3_db_handle(handle))
    }

    /// Binds `arguments`, steps through every row with `body`, and resets.
    fileprivate func stepRows(arguments: StatementArguments, _ body: (ColumnReader) throws -> Void) throws {
        try setArguments(arguments)
        let handle = sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW: try body(ColumnReader(handle: handle))
            case SQLITE_DONE: return
            case let code:
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))),
                    sql: sql)
            }
        }
    }
}

extension Database {
    fileprivate func forEachCached(
        sql: String, arguments: StatementArguments, _ body: (ColumnReader) throws -> Void
    ) throws {
        try cachedStatement(sql: sql).stepRows(arguments: arguments, body)
    }

    fileprivate func fetchAllCached<T>(
        sql: String, arguments: StatementArguments, _ decode: (ColumnReader) throws -> T
    ) throws -> [T] {
        var values: [T] = []
        try forEachCached(sql: sql, arguments: arguments) { values.append(try decode($0)) }
        return values
    }
}
