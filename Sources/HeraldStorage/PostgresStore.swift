import Foundation
public import HeraldCore
public import Logging
import NIOCore
import NIOSSL
import PostgresNIO

/// The shared store: one PostgreSQL database that several `herald serve` nodes use at once.
///
/// Every method runs in a transaction of its own on a pooled connection; values are bound
/// parameters only. Messages for one device are serialised by locking the device's row, so
/// a device's queue sequence numbers are committed in the order they were taken and a
/// reader after sequence N never misses a row committed later.
public final class PostgresStore: ClusterStore {
    public let nodeID: String
    /// Where this node runs (host, process, HTTP address), recorded with its heartbeats.
    public let nodeAddress: String
    /// Where the database is.
    public let location: Location
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let logger: Logger

    /// Where the database is, from a `postgres://user:password@host:port/database` URL.
    public struct Location: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var user: String
        public var password: String?
        public var database: String
        /// `sslmode=require` in the URL: connect with TLS and check the server's certificate.
        public var requireTLS: Bool

        /// Parses a `postgres://` or `postgresql://` URL; the password may instead come from
        /// `PGPASSWORD`. Nil when it is not such a URL.
        public init?(url: String) {
            self.init(url: url, environment: ProcessInfo.processInfo.environment)
        }

        init?(url: String, environment: [String: String]) {
            guard let components = URLComponents(string: url),
                components.scheme == "postgres" || components.scheme == "postgresql",
                let host = components.host, !host.isEmpty
            else { return nil }
            self.host = host
            port = components.port ?? 5432
            user = components.user ?? environment["PGUSER"] ?? "postgres"
            password = components.password ?? environment["PGPASSWORD"]
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            database = path.isEmpty ? user : path
            requireTLS = components.queryItems?.contains { $0.name == "sslmode" && $0.value == "require" } ?? false
        }

        /// The URL without its password, for logs.
        public var redacted: String { "postgres://\(user)@\(host):\(port)/\(database)" }
    }

    /// Why the store could not open or a statement failed, in the database's words.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Connects, migrates the schema (one node at a time) and answers the store for `nodeID`.
    /// Fails after `timeout` when the database cannot be reached or refuses the login.
    public static func open(
        _ location: Location, nodeID: String, nodeAddress: String = "", logger: Logger, connections: Int = 20,
        timeout: Duration = .seconds(20), migrating: Bool = true
    ) async throws -> PostgresStore {
        let tls: PostgresClient.Configuration.TLS =
            location.requireTLS ? .require(.makeClientConfiguration()) : .disable
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls)
        configuration.options.maximumConnections = connections
        configuration.options.minimumConnections = 1
        let store = PostgresStore(
            client: PostgresClient(configuration: configuration, backgroundLogger: logger), location: location,
            nodeID: nodeID, nodeAddress: nodeAddress, logger: logger)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    if migrating { try await store.migrate() } else { _ = try await store.rows("SELECT 1") }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw Failure(description: "PostgreSQL at \(location.redacted) did not answer in \(timeout)")
                }
                try await group.next()
                group.cancelAll()
            }
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Creates an empty database `name` (letters, digits and underscores) on the server at
    /// `location`, connecting to its database `location.database` to do so.
    public static func createDatabase(_ name: String, at location: Location, logger: Logger) async throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw StoreError.conflict("database name \(name)")
        }
        let store = try await open(location, nodeID: "admin", logger: logger, connections: 1, migrating: false)
        defer { store.close() }
        // Outside a transaction: PostgreSQL creates databases only there.
        _ = try await store.rows(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
    }

    private init(client: PostgresClient, location: Location, nodeID: String, nodeAddress: String, logger: Logger) {
        self.client = client
        self.location = location
        self.nodeID = nodeID
        self.nodeAddress = nodeAddress
        self.logger = logger
        running = Task { await client.run() }
    }

    /// Closes the connections.
    public func close() {
        running.cancel()
    }

    deinit {
        running.cancel()
    }

    // MARK: Schema

    /// Each migration runs once, in order, recorded in `herald_migrations`; nodes starting
    /// together take turns through an advisory lock.
    static let migrations: [(name: String, sql: [String])] = [
        (
            "v1-schema",
            [
                """
                CREATE TABLE projects (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    number BIGINT NOT NULL UNIQUE,
                    api_key TEXT NOT NULL UNIQUE,
                    server_key TEXT NOT NULL UNIQUE,
                    created_at BIGINT NOT NULL,
                    settings TEXT NOT NULL)
                """,
                """
                CREATE TABLE service_account_keys (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    client_email TEXT NOT NULL,
                    public_key_pem TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    revoked_at BIGINT)
                """,
                "CREATE INDEX service_account_keys_project ON service_account_keys(project_id)",
                "CREATE TABLE secrets (name TEXT PRIMARY KEY, value BYTEA NOT NULL)",
                "CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
                "INSERT INTO counters (name, value) VALUES ('credentials_revision', 0)",
                """
                CREATE TABLE messages (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    target_kind TEXT NOT NULL,
                    target TEXT NOT NULL,
                    body TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL)
                """,
                "CREATE INDEX messages_project ON messages(project_id)",
                "CREATE INDEX messages_expiry ON messages(expires_at)",
                """
                CREATE TABLE devices (
                    android_id BIGINT PRIMARY KEY,
                    security_token BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_connected_at BIGINT,
                    holder_node TEXT)
                """,
                "CREATE INDEX devices_holder ON devices(holder_node) WHERE holder_node IS NOT NULL",
                """
                CREATE TABLE registrations (
                    token TEXT COLLATE "C" PRIMARY KEY,
                    kind TEXT NOT NULL,
                    project_id TEXT COLLATE "C" REFERENCES projects(id) ON DELETE CASCADE,
                    sender TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    subtype TEXT,
                    platform TEXT NOT NULL,
                    android_id BIGINT NOT NULL REFERENCES devices(android_id) ON DELETE CASCADE,
                    installation_id TEXT,
                    p256dh BYTEA,
                    auth BYTEA,
                    coding TEXT,
                    created_at BIGINT NOT NULL,
                    deleted_at BIGINT)
                """,
                "CREATE INDEX registrations_device ON registrations(android_id)",
                "CREATE INDEX registrations_installation ON registrations(project_id, installation_id)",
                "CREATE INDEX registrations_project ON registrations(project_id, token)",
                """
                CREATE TABLE installations (
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    fid TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    refresh_token TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (project_id, fid))
                """,
                """
                CREATE TABLE device_queue (
                    sequence BIGSERIAL PRIMARY KEY,
                    android_id BIGINT NOT NULL,
                    token TEXT NOT NULL,
                    persistent_id TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    stanza BYTEA NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    collapse_key TEXT,
                    is_high_priority BOOLEAN NOT NULL,
                    app_id TEXT NOT NULL,
                    analytics_label TEXT NOT NULL,
                    deleted_count BIGINT NOT NULL)
                """,
                "CREATE INDEX device_queue_device ON device_queue(android_id, sequence)",
                "CREATE INDEX device_queue_expiry ON device_queue(expires_at)",
                "CREATE INDEX device_queue_project ON device_queue(project_id)",
                """
                CREATE TABLE delivery_stats (
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    day TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    label TEXT NOT NULL,
                    counter TEXT NOT NULL,
                    shard SMALLINT NOT NULL,
                    value BIGINT NOT NULL,
                    PRIMARY KEY (project_id, day, app_id, label, counter, shard))
                """,
                """
                CREATE TABLE topic_subscriptions (
                    token TEXT COLLATE "C" NOT NULL REFERENCES registrations(token) ON DELETE CASCADE,
                    topic TEXT COLLATE "C" NOT NULL,
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (token, topic))
                """,
                "CREATE INDEX topic_subscriptions_topic ON topic_subscriptions(project_id, topic, token)",
                """
                CREATE TABLE fanouts (
                    message_id TEXT COLLATE "C" PRIMARY KEY,
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    audience_kind TEXT NOT NULL,
                    audience TEXT NOT NULL,
                    body TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    state TEXT NOT NULL,
                    cursor TEXT COLLATE "C" NOT NULL,
                    delivered BIGINT NOT NULL,
                    owner_node TEXT)
                """,
                "CREATE INDEX fanouts_state ON fanouts(state, created_at)",
                """
                CREATE TABLE device_groups (
                    notification_key TEXT PRIMARY KEY,
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    members TEXT NOT NULL,
                    UNIQUE (project_id, name))
                """,
                "CREATE TABLE nodes (id TEXT PRIMARY KEY, started_at BIGINT NOT NULL, heartbeat_at BIGINT NOT NULL)",
                """
                CREATE TABLE quota_counts (
                    quota TEXT NOT NULL,
                    project_id TEXT NOT NULL,
                    node_id TEXT NOT NULL,
                    bucket BIGINT NOT NULL,
                    count BIGINT NOT NULL,
                    PRIMARY KEY (quota, project_id, node_id, bucket))
                """,
                "CREATE INDEX quota_counts_bucket ON quota_counts(quota, bucket)",
            ]
        ),
        ("v2-messages-by-target", ["CREATE INDEX messages_target ON messages(target, created_at)"]),
        (
            "v3-fanout-first-devices",
            [
                "ALTER TABLE fanouts ADD COLUMN first_devices TEXT NOT NULL DEFAULT ''",
                "ALTER TABLE fanouts ADD COLUMN first_done INTEGER NOT NULL DEFAULT 0",
            ]
        ),
        (
            // Fanout pages are read in device order (`FanoutPosition`).
            "v4-fanout-pages-by-device",
            [
                "ALTER TABLE topic_subscriptions ADD COLUMN android_id BIGINT NOT NULL DEFAULT 0",
                """
                UPDATE topic_subscriptions SET android_id = registrations.android_id
                FROM registrations WHERE registrations.token = topic_subscriptions.token
                """,
                "DROP INDEX topic_subscriptions_topic",
                "CREATE INDEX topic_subscriptions_topic ON topic_subscriptions(project_id, topic, android_id, token)",
                "DROP INDEX registrations_project",
                "CREATE INDEX registrations_project ON registrations(project_id, android_id, token)",
            ]
        ),
        // Where each node runs, so that a node asking for a live node's id is told which one holds it.
        ("v5-node-address", ["ALTER TABLE nodes ADD COLUMN address TEXT NOT NULL DEFAULT ''"]),
        (
            // Which device's impression or open of a message was counted: each counts once.
            "v6-receipts",
            [
                """
                CREATE TABLE receipts (
                    message_id TEXT COLLATE "C" NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                    android_id BIGINT NOT NULL,
                    counter TEXT NOT NULL,
                    PRIMARY KEY (message_id, android_id, counter))
                """
            ]
        ),
    ]

    private func migrate() async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7265726)", logger: self.logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS herald_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)",
                logger: self.logger)
            let applied = Set(
                try await self.rows("SELECT name FROM herald_migrations", on: connection).map {
                    try $0.decode(String.self)
                })
            for migration in Self.migrations where !applied.contains(migration.name) {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                }
                try await connection.query(
                    "INSERT INTO herald_migrations (name, applied_at) VALUES (\(migration.name), now())",
                    logger: self.logger)
                self.logger.info("database migrated", metadata: ["migration": "\(migration.name)"])
            }
        }
    }

    // MARK: Projects

    public func createProject(_ project: Project, firstKey: ServiceAccountKey) async throws {
        let settings = try StoreCoding.encode(project.settings)
        try await transaction { connection in
            try await self.run(
                """
                INSERT INTO projects (id, number, api_key, server_key, created_at, settings)
                VALUES (\(project.id), \(project.number), \(project.apiKey), \(project.serverKey),
                    \(project.createdAt.milliseconds), \(settings))
                """, on: connection)
            try await self.insert(firstKey, on: connection)
            try await self.bumpRevision(connection)
        }
    }

    public func project(id: String) async throws -> Project? {
        try await rows("SELECT \(unescaped: Self.projectColumns) FROM projects WHERE id = \(id)").first.map(
            Self.project)
    }

    public func projects() async throws -> [Project] {
        try await rows("SELECT \(unescaped: Self.projectColumns) FROM projects ORDER BY id").map(Self.project)
    }

    public func updateSettings(_ settings: ProjectSettings, projectID: String) async throws -> Bool {
        let encoded = try StoreCoding.encode(settings)
        return try await transaction { connection in
            let changed = try await self.count(
                "UPDATE projects SET settings = \(encoded) WHERE id = \(projectID) RETURNING 1", on: connection)
            guard changed > 0 else { return false }
            try await self.bumpRevision(connection)
            return true
        }
    }

    public func deleteProject(id: String) async throws -> Bool {
        try await transaction { connection in
            let deleted = try await self.count("DELETE FROM projects WHERE id = \(id) RETURNING 1", on: connection)
            guard deleted > 0 else { return false }
            try await self.bumpRevision(connection)
            return true
        }
    }

    // MARK: Keys

    public func addServiceAccountKey(_ key: ServiceAccountKey) async throws {
        try await transaction { connection in
            guard try await self.count("SELECT 1 FROM projects WHERE id = \(key.projectID)", on: connection) > 0
            else { throw StoreError.notFound("project \(key.projectID)") }
            try await self.insert(key, on: connection)
            try await self.bumpRevision(connection)
        }
    }

    public func serviceAccountKey(id: String) async throws -> ServiceAccountKey? {
        try await rows("SELECT \(unescaped: Self.keyColumns) FROM service_account_keys WHERE id = \(id)").first.map(
            Self.key)
    }

    public func serviceAccountKeys(projectID: String) async throws -> [ServiceAccountKey] {
        try await rows(
            """
            SELECT \(unescaped: Self.keyColumns) FROM service_account_keys WHERE project_id = \(projectID)
            ORDER BY created_at, id
            """
        ).map(Self.key)
    }

    public func allServiceAccountKeys() async throws -> [ServiceAccountKey] {
        try await rows("SELECT \(unescaped: Self.keyColumns) FROM service_account_keys ORDER BY created_at, id").map(
            Self.key)
    }

    public func revokeServiceAccountKey(id: String, at time: Timestamp) async throws -> Bool {
        try await transaction { connection in
            let changed = try await self.count(
                """
                UPDATE service_account_keys SET revoked_at = \(time.milliseconds)
                WHERE id = \(id) AND revoked_at IS NULL RETURNING 1
                """, on: connection)
            guard changed > 0 else { return false }
            try await self.bumpRevision(connection)
            return true
        }
    }

    public func credentialsRevision() async throws -> Int64 {
        try await rows("SELECT value FROM counters WHERE name = 'credentials_revision'").first?.decode(Int64.self) ?? 0
    }

    // MARK: Secrets

    public func secret(named name: String, orCreate make: @escaping @Sendable () -> [UInt8]) async throws -> [UInt8] {
        let read: PostgresQuery = "SELECT value FROM secrets WHERE name = \(name)"
        if let stored = try await rows(read).first {
            return Array(try stored.decode(ByteBuffer.self).readableBytesView)
        }
        // The first node to insert wins; every node reads the stored value back.
        try await run(
            "INSERT INTO secrets (name, value) VALUES (\(name), \(ByteBuffer(bytes: make()))) ON CONFLICT DO NOTHING")
        guard let stored = try await rows(read).first else { throw StoreError.notFound("secret \(name)") }
        return Array(try stored.decode(ByteBuffer.self).readableBytesView)
    }

    public func rotateSecret(named name: String, to value: [UInt8], at time: Timestamp) async throws {
        try await transaction { connection in
            let current =
                try await self.rows(
                    "SELECT value FROM secrets WHERE name = \(name) FOR UPDATE", on: connection
                ).first.map { Array(try $0.decode(ByteBuffer.self).readableBytesView) } ?? []
            for (key, stored) in [
                (name + SecretRotation.previousSuffix, current),
                (name + SecretRotation.rotatedAtSuffix, SecretRotation.encode(time)),
                (name, value),
            ] {
                try await self.run(
                    """
                    INSERT INTO secrets (name, value) VALUES (\(key), \(ByteBuffer(bytes: stored)))
                    ON CONFLICT (name) DO UPDATE SET value = excluded.value
                    """, on: connection)
            }
            try await self.bumpRevision(connection)
        }
    }

    // MARK: Messages

    public func appendMessages(
        _ messages: [StoredMessage], queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        try await transaction { connection in
            try await self.enqueue(queue, limits: limits, stats: stats, messages: messages, on: connection)
        }
    }

    public func message(id: String) async throws -> StoredMessage? {
        try await rows(
            "SELECT id, project_id, target_kind, target, body, created_at, expires_at FROM messages WHERE id = \(id)"
        ).first.map { row in
            let (id, project, kind, target, body, created, expires) = try row.decode(
                (String, String, String, String, String, Int64, Int64).self)
            return StoredMessage(
                id: id, projectID: project, targetKind: kind, target: target, body: body,
                createdAt: Timestamp(milliseconds: created), expiresAt: Timestamp(milliseconds: expires))
        }
    }

    public func messageCount(projectID: String) async throws -> Int {
        try await rows("SELECT COUNT(*) FROM messages WHERE project_id = \(projectID)").first?.decode(Int.self) ?? 0
    }

    /// Inserts messages: a part of a statement, its values placed in `binds`.
    private static func insertion(of messages: [StoredMessage], _ binds: inout PostgresBindings) -> String {
        """
        INSERT INTO messages (id, project_id, target_kind, target, body, created_at, expires_at)
        SELECT * FROM UNNEST(\(binds.place(messages.map(\.id)))::text[], \(binds.place(messages.map(\.projectID)))::text[],
            \(binds.place(messages.map(\.targetKind)))::text[], \(binds.place(messages.map(\.target)))::text[],
            \(binds.place(messages.map(\.body)))::text[], \(binds.place(messages.map(\.createdAt.milliseconds)))::bigint[],
            \(binds.place(messages.map(\.expiresAt.milliseconds)))::bigint[])
        """
    }

    /// Stores `messages` and joins entries to their queues as `QueuePolicy` decides, adding
    /// `stats` and what the decisions collapse or drop, in four statements whatever the
    /// batch: the devices' rows are locked (in one order, so that two writers cannot
    /// deadlock) while the messages are inserted; their queues are read; then the deletions,
    /// insertions and counters are written together. Sequence numbers are taken by the
    /// insertion, while the devices are locked.
    private func enqueue(
        _ queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat], messages: [StoredMessage] = [],
        on connection: PostgresConnection
    ) async throws -> [Enqueued] {
        let devices = Array(Set(queue.map { Int64(bitPattern: $0.androidID) })).sorted()
        if !messages.isEmpty || !devices.isEmpty {
            var binds = PostgresBindings()
            let sql = """
                WITH inserted AS (\(Self.insertion(of: messages, &binds)))
                SELECT 1 FROM devices WHERE android_id = ANY(\(binds.place(devices))) ORDER BY android_id FOR UPDATE
                """
            try await run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection)
        }
        guard !queue.isEmpty else {
            try await record(stats, on: connection)
            return []
        }
        struct DeviceMessage: Hashable {
            var androidID: UInt64
            var persistentID: String
        }
        var taken: Set<DeviceMessage> = []
        var current: [String: [QueuedMessage]] = [:]
        let tokens = Set(queue.map(\.token))
        for row in try await rows(
            """
            SELECT \(unescaped: Self.admissionColumns) FROM device_queue WHERE android_id = ANY(\(devices))
            ORDER BY sequence
            """, on: connection)
        {
            let entry = try Self.queued(row)
            taken.insert(DeviceMessage(androidID: entry.androidID, persistentID: entry.persistentID))
            if tokens.contains(entry.token) { current[entry.token, default: []].append(entry) }
        }
        // Rows of this batch get stand-in sequence numbers above every stored one until inserted.
        let standIn = Int64.max / 2
        var nextStandIn = standIn
        var decisions: [Enqueued] = []
        var counted = stats
        var deletes: [Int64] = []
        var inserts: [QueuedMessage] = []
        for entry in queue {
            let admission = QueueAdmission(entry, current: current[entry.token] ?? [], limits: limits)
            let deleted = Set(admission.decision.delete)
            deletes += deleted.filter { $0 < standIn }
            current[entry.token]?.removeAll { deleted.contains($0.sequence) }
            inserts.removeAll { deleted.contains($0.sequence) }
            var stored: [QueuedMessage] = []
            for row in admission.inserts {
                guard taken.insert(DeviceMessage(androidID: row.androidID, persistentID: row.persistentID)).inserted
                else { throw StoreError.conflict("persistent id \(row.persistentID)") }
                var inserted = row
                nextStandIn += 1
                inserted.sequence = nextStandIn
                current[entry.token, default: []].append(inserted)
                inserts.append(inserted)
                stored.append(inserted)
            }
            counted += admission.stats
            decisions.append(Enqueued(decision: admission.decision, stored: stored))
        }
        var sequences: [DeviceMessage: Int64] = [:]
        var binds = PostgresBindings()
        let sql = """
            WITH deleted AS (DELETE FROM device_queue WHERE sequence = ANY(\(binds.place(deletes)))),
                counted AS (\(Self.counting(counted, &binds)))
            \(Self.insertion(of: inserts, &binds)) RETURNING android_id, persistent_id, sequence
            """
        for row in try await rows(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection) {
            let (device, persistentID, sequence) = try row.decode((Int64, String, Int64).self)
            sequences[DeviceMessage(androidID: UInt64(bitPattern: device), persistentID: persistentID)] = sequence
        }
        // Rows a later entry of the batch deleted were never inserted; the rest have their numbers now.
        return decisions.map { enqueued in
            var enqueued = enqueued
            enqueued.stored = enqueued.stored.compactMap { entry in
                guard
                    let sequence = sequences[
                        DeviceMessage(androidID: entry.androidID, persistentID: entry.persistentID)]
                else { return nil }
                var entry = entry
                entry.sequence = sequence
                return entry
            }
            return enqueued
        }
    }

    /// Inserts queue rows in entry order, the database numbering them: a part of a
    /// statement, its values placed in `binds`.
    private static func insertion(of entries: [QueuedMessage], _ binds: inout PostgresBindings) -> String {
        """
        INSERT INTO device_queue (android_id, token, persistent_id, message_id, project_id, stanza,
            created_at, expires_at, collapse_key, is_high_priority, app_id, analytics_label, deleted_count)
        SELECT android_id, token, persistent_id, message_id, project_id, stanza, created_at, expires_at,
            CASE WHEN has_collapse_key THEN collapse_key END, is_high_priority, app_id, analytics_label,
            deleted_count
        FROM UNNEST(\(binds.place(entries.map { Int64(bitPattern: $0.androidID) }))::bigint[],
            \(binds.place(entries.map(\.token)))::text[], \(binds.place(entries.map(\.persistentID)))::text[],
            \(binds.place(entries.map(\.messageID)))::text[], \(binds.place(entries.map(\.projectID)))::text[],
            \(binds.place(entries.map { ByteBuffer(bytes: $0.stanza) }))::bytea[],
            \(binds.place(entries.map(\.createdAt.milliseconds)))::bigint[],
            \(binds.place(entries.map(\.expiresAt.milliseconds)))::bigint[],
            \(binds.place(entries.map { $0.collapseKey ?? "" }))::text[],
            \(binds.place(entries.map { $0.collapseKey != nil }))::bool[],
            \(binds.place(entries.map(\.isHighPriority)))::bool[], \(binds.place(entries.map(\.appID)))::text[],
            \(binds.place(entries.map(\.analyticsLabel)))::text[],
            \(binds.place(entries.map { Int64($0.deletedCount) }))::bigint[])
            WITH ORDINALITY AS rows(android_id, token, persistent_id, message_id, project_id, stanza, created_at,
                expires_at, collapse_key, has_collapse_key, is_high_priority, app_id, analytics_label,
                deleted_count, position)
        ORDER BY position
        """
    }

    // MARK: Devices and registrations

    public func createDevice(_ device: Device) async throws {
        try await run(
            """
            INSERT INTO devices (android_id, security_token, created_at)
            VALUES (\(Int64(bitPattern: device.androidID)), \(Int64(bitPattern: device.securityToken)),
                \(device.createdAt.milliseconds))
            """)
    }

    public func device(androidID: UInt64) async throws -> Device? {
        try await rows(
            """
            SELECT android_id, security_token, created_at, last_connected_at FROM devices
            WHERE android_id = \(Int64(bitPattern: androidID))
            """
        ).first.map { row in
            let (id, token, created, connected) = try row.decode((Int64, Int64, Int64, Int64?).self)
            return Device(
                androidID: UInt64(bitPattern: id), securityToken: UInt64(bitPattern: token),
                createdAt: Timestamp(milliseconds: created),
                lastConnectedAt: connected.map(Timestamp.init(milliseconds:)))
        }
    }

    public func createRegistration(_ registration: Registration) async throws {
        try await run(
            """
            INSERT INTO registrations (token, kind, project_id, sender, app_id, subtype, platform, android_id,
                installation_id, p256dh, auth, coding, created_at)
            VALUES (\(registration.token), \(registration.kind.rawValue), \(registration.projectID),
                \(registration.sender), \(registration.appID), \(registration.subtype),
                \(registration.platform.rawValue), \(Int64(bitPattern: registration.androidID)),
                \(registration.installationID), \(registration.webKeys.map { ByteBuffer(bytes: $0.p256dh) }),
                \(registration.webKeys.map { ByteBuffer(bytes: $0.auth) }), \(registration.webKeys?.coding),
                \(registration.createdAt.milliseconds))
            """)
    }

    public func registration(token: String) async throws -> Registration? {
        try await rows("SELECT \(unescaped: Self.registrationColumns) FROM registrations WHERE token = \(token)")
            .first.map(Self.registration)
    }

    public func registration(installationID: String, projectID: String) async throws -> Registration? {
        try await rows(
            """
            SELECT \(unescaped: Self.registrationColumns) FROM registrations
            WHERE project_id = \(projectID) AND installation_id = \(installationID)
            ORDER BY created_at DESC, token DESC LIMIT 1
            """
        ).first.map(Self.registration)
    }

    public func registrations(androidID: UInt64) async throws -> [Registration] {
        try await rows(
            """
            SELECT \(unescaped: Self.registrationColumns) FROM registrations
            WHERE android_id = \(Int64(bitPattern: androidID)) AND deleted_at IS NULL ORDER BY token
            """
        ).map(Self.registration)
    }

    public func deleteRegistration(token: String, at time: Timestamp) async throws -> Registration? {
        try await transaction { connection in
            guard
                let row = try await self.rows(
                    """
                    SELECT \(unescaped: Self.registrationColumns) FROM registrations
                    WHERE token = \(token) AND deleted_at IS NULL FOR UPDATE
                    """, on: connection
                ).first
            else { return nil }
            var registration = try Self.registration(row)
            registration.deletedAt = time
            try await self.run(
                "UPDATE registrations SET deleted_at = \(time.milliseconds) WHERE token = \(token)", on: connection)
            let discarded = try await self.rows(
                """
                DELETE FROM device_queue
                WHERE android_id = \(Int64(bitPattern: registration.androidID)) AND token = \(token)
                RETURNING \(unescaped: Self.queueColumns)
                """, on: connection
            ).map(Self.queued)
            try await self.record(
                discarded.filter { $0.deletedCount == 0 }.map { DeliveryStat($0.statKey, .unregistered) },
                on: connection)
            return registration
        }
    }

    public func lastConnections(androidIDs: [UInt64]) async throws -> [UInt64: Timestamp?] {
        guard !androidIDs.isEmpty else { return [:] }
        var result: [UInt64: Timestamp?] = [:]
        for row in try await rows(
            """
            SELECT android_id, last_connected_at FROM devices
            WHERE android_id = ANY(\(androidIDs.map { Int64(bitPattern: $0) }))
            """)
        {
            let (id, connected) = try row.decode((Int64, Int64?).self)
            result[UInt64(bitPattern: id)] = connected.map(Timestamp.init(milliseconds:))
        }
        return result
    }

    /// Records the login and claims the device's connection for this node.
    public func recordConnection(androidID: UInt64, at time: Timestamp) async throws {
        try await run(
            """
            UPDATE devices SET last_connected_at = \(time.milliseconds), holder_node = \(nodeID)
            WHERE android_id = \(Int64(bitPattern: androidID))
            """)
    }

    public func createInstallation(_ installation: Installation) async throws -> Bool {
        try await count(
            """
            INSERT INTO installations (project_id, fid, app_id, refresh_token, created_at)
            VALUES (\(installation.projectID), \(installation.fid), \(installation.appID),
                \(installation.refreshToken), \(installation.createdAt.milliseconds))
            ON CONFLICT (project_id, fid) DO NOTHING RETURNING 1
            """) == 1
    }

    public func installation(fid: String, projectID: String) async throws -> Installation? {
        try await rows(
            """
            SELECT fid, project_id, app_id, refresh_token, created_at FROM installations
            WHERE project_id = \(projectID) AND fid = \(fid)
            """
        ).first.map { row in
            let (fid, project, app, refresh, created) = try row.decode((String, String, String, String, Int64).self)
            return Installation(
                fid: fid, projectID: project, appID: app, refreshToken: refresh,
                createdAt: Timestamp(milliseconds: created))
        }
    }

    // MARK: Device queues

    public func pendingMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp) async throws
        -> [QueuedMessage]
    {
        try await rows(
            """
            SELECT \(unescaped: Self.queueColumns) FROM device_queue
            WHERE android_id = \(Int64(bitPattern: androidID)) AND sequence > \(sequence)
                AND expires_at > \(now.milliseconds)
            ORDER BY sequence LIMIT \(limit)
            """
        ).map(Self.queued)
    }

    public func pendingHighPriorityMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        async throws -> [QueuedMessage]
    {
        try await rows(
            """
            SELECT \(unescaped: Self.queueColumns) FROM device_queue
            WHERE android_id = \(Int64(bitPattern: androidID)) AND sequence > \(sequence)
                AND expires_at > \(now.milliseconds) AND is_high_priority
            ORDER BY sequence LIMIT \(limit)
            """
        ).map(Self.queued)
    }

    public func acknowledge(androidID: UInt64, persistentIDs: [String]) async throws -> Int {
        try await acknowledge(batch: [androidID: persistentIDs])
    }

    public func acknowledge(batch: [UInt64: [String]]) async throws -> Int {
        var devices: [Int64] = []
        var ids: [String] = []
        for (androidID, persistentIDs) in batch {
            for id in persistentIDs {
                devices.append(Int64(bitPattern: androidID))
                ids.append(id)
            }
        }
        guard !ids.isEmpty else { return 0 }
        return try await transaction { connection in
            let removed = try await self.rows(
                """
                DELETE FROM device_queue AS queue
                USING UNNEST(\(devices)::bigint[], \(ids)::text[]) AS acknowledged(android_id, persistent_id)
                WHERE queue.android_id = acknowledged.android_id AND queue.persistent_id = acknowledged.persistent_id
                RETURNING \(unescaped: SQLiteStore.qualified(Self.queueColumns, by: "queue"))
                """, on: connection
            ).map(Self.queued)
            try await self.record(
                removed.filter { $0.deletedCount == 0 }.map { DeliveryStat($0.statKey, .delivered) }, on: connection)
            return removed.count
        }
    }

    public func deleteExpired(now: Timestamp, limit: Int) async throws -> Int {
        try await transaction { connection in
            try await self.run(
                """
                DELETE FROM messages WHERE id IN (
                    SELECT id FROM messages WHERE expires_at <= \(now.milliseconds) LIMIT \(limit))
                """, on: connection)
            let expired = try await self.rows(
                """
                DELETE FROM device_queue WHERE sequence IN (
                    SELECT sequence FROM device_queue WHERE expires_at <= \(now.milliseconds)
                    ORDER BY expires_at LIMIT \(limit))
                RETURNING \(unescaped: Self.queueColumns)
                """, on: connection
            ).map(Self.queued)
            try await self.record(
                expired.filter { $0.deletedCount == 0 }.map { DeliveryStat($0.statKey, .expired) }, on: connection)
            return expired.count
        }
    }

    public func queuedCount(androidID: UInt64) async throws -> Int {
        try await rows("SELECT COUNT(*) FROM device_queue WHERE android_id = \(Int64(bitPattern: androidID))")
            .first?.decode(Int.self) ?? 0
    }

    // MARK: Topics

    public func subscribe(_ subscription: TopicSubscription, limit: Int) async throws -> Bool {
        try await transaction { connection in
            // The registration's row is the lock that keeps two writers from passing the limit together.
            try await self.run(
                "SELECT 1 FROM registrations WHERE token = \(subscription.token) FOR UPDATE", on: connection)
            if try await self.count(
                """
                SELECT 1 FROM topic_subscriptions WHERE token = \(subscription.token) AND topic = \(subscription.topic)
                """, on: connection) > 0
            {
                return false
            }
            let count =
                try await self.rows(
                    "SELECT COUNT(*) FROM topic_subscriptions WHERE token = \(subscription.token)", on: connection
                ).first?.decode(Int.self) ?? 0
            guard count < limit else { throw StoreError.limit("topics per token") }
            let inserted = try await self.count(
                """
                INSERT INTO topic_subscriptions (token, topic, project_id, created_at, android_id)
                SELECT \(subscription.token), \(subscription.topic), \(subscription.projectID),
                    \(subscription.createdAt.milliseconds), android_id
                FROM registrations WHERE token = \(subscription.token) RETURNING 1
                """, on: connection)
            guard inserted > 0 else { throw StoreError.notFound("token") }
            return true
        }
    }

    public func unsubscribe(token: String, topic: String) async throws -> Bool {
        try await count("DELETE FROM topic_subscriptions WHERE token = \(token) AND topic = \(topic) RETURNING 1") > 0
    }

    public func subscriptions(token: String) async throws -> [TopicSubscription] {
        try await rows(
            """
            SELECT project_id, token, topic, created_at FROM topic_subscriptions WHERE token = \(token) ORDER BY topic
            """
        ).map { row in
            let (project, token, topic, created) = try row.decode((String, String, String, Int64).self)
            return TopicSubscription(
                projectID: project, token: token, topic: topic, createdAt: Timestamp(milliseconds: created))
        }
    }

    public func topics(ofTokens tokens: [String]) async throws -> [String: Set<String>] {
        guard !tokens.isEmpty else { return [:] }
        var result: [String: Set<String>] = [:]
        for row in try await rows("SELECT token, topic FROM topic_subscriptions WHERE token = ANY(\(tokens))") {
            let (token, topic) = try row.decode((String, String).self)
            result[token, default: []].insert(topic)
        }
        return result
    }

    public func audience(projectID: String, topics: [String]?, after cursor: String, limit: Int) async throws
        -> [Registration]
    {
        if topics?.isEmpty == true { return [] }
        var binds = PostgresBindings()
        let project = binds.place(projectID)
        let (order, values): (String, [String]) =
            switch FanoutPosition(cursor: cursor) {
            case .start: ("android_id, token", [])
            case .after(let device, let token): ("android_id, token", [binds.place(device), binds.place(token)])
            case .afterToken(let token): ("token", [binds.place(token)])
            }
        func after(_ table: String) -> String {
            values.isEmpty
                ? "" : "AND (\(SQLiteStore.qualified(order, by: table))) > (\(values.joined(separator: ", ")))"
        }
        let sql: String
        if let topics {
            // As in the SQLite store: a page holds `limit` live registrations unless it is the
            // last, and each topic gives its next `limit` off the subscription index in page
            // order, their union's first `limit` being the page. A topic is compared as a
            // value: for a list (`topic = ANY(…)`) the planner sorted every subscription after
            // the cursor instead (`EXPLAIN ANALYZE` at 100,000 subscribers: 80 against 12 ms a page).
            let limitBind = binds.place(limit)
            let arms = topics.map { topic in
                """
                (SELECT \(SQLiteStore.qualified(Self.registrationColumns, by: "registrations")) FROM topic_subscriptions
                JOIN registrations ON registrations.token = topic_subscriptions.token
                WHERE topic_subscriptions.project_id = \(project) AND topic_subscriptions.topic = \(binds.place(topic))
                \(after("topic_subscriptions")) AND registrations.deleted_at IS NULL
                ORDER BY \(SQLiteStore.qualified(order, by: "topic_subscriptions")) LIMIT \(limitBind))
                """
            }
            sql = arms.joined(separator: " UNION ") + (topics.count == 1 ? "" : " ORDER BY \(order) LIMIT \(limitBind)")
        } else {
            sql = """
                SELECT \(Self.registrationColumns) FROM registrations
                WHERE project_id = \(project) AND kind = 'app' AND deleted_at IS NULL \(after("registrations"))
                ORDER BY \(order) LIMIT \(binds.place(limit))
                """
        }
        return try await rows(PostgresQuery(unsafeSQL: sql, binds: binds)).map(Self.registration)
    }

    public func audience(projectID: String, topics: [String]?, androidIDs: [UInt64]) async throws -> [Registration] {
        guard !androidIDs.isEmpty else { return [] }
        let devices = androidIDs.map { Int64(bitPattern: $0) }
        if let topics {
            guard !topics.isEmpty else { return [] }
            return try await rows(
                """
                SELECT \(unescaped: Self.registrationColumns) FROM registrations
                WHERE project_id = \(projectID) AND kind = 'app' AND deleted_at IS NULL AND android_id = ANY(\(devices))
                AND EXISTS (SELECT 1 FROM topic_subscriptions
                    WHERE topic_subscriptions.token = registrations.token AND topic = ANY(\(topics)))
                ORDER BY token
                """
            ).map(Self.registration)
        }
        return try await rows(
            """
            SELECT \(unescaped: Self.registrationColumns) FROM registrations
            WHERE project_id = \(projectID) AND kind = 'app' AND deleted_at IS NULL AND android_id = ANY(\(devices))
            ORDER BY token
            """
        ).map(Self.registration)
    }

    // MARK: Fanouts

    /// Stores the fanout claimed by this node, which expands it.
    public func createFanout(_ message: StoredMessage, job: FanoutJob, stats: [DeliveryStat]) async throws {
        let (kind, audience) = StoreCoding.encode(job.audience)
        try await transaction { connection in
            var binds = PostgresBindings()
            let sql = """
                WITH inserted AS (\(Self.insertion(of: [message], &binds)))
                INSERT INTO fanouts (message_id, project_id, audience_kind, audience, body, created_at, expires_at,
                    state, cursor, delivered, owner_node)
                VALUES (\(binds.place(job.messageID)), \(binds.place(job.projectID)), \(binds.place(kind)),
                    \(binds.place(audience)), \(binds.place(job.body)), \(binds.place(job.createdAt.milliseconds)),
                    \(binds.place(job.expiresAt.milliseconds)), \(binds.place(job.state.rawValue)),
                    \(binds.place(job.cursor)), \(binds.place(job.delivered)), \(binds.place(self.nodeID)))
                """
            try await self.run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection)
            try await self.record(stats, on: connection)
        }
    }

    /// The unfinished jobs this node has claimed.
    public func unfinishedFanouts() async throws -> [FanoutJob] {
        try await rows(
            """
            SELECT message_id, project_id, audience_kind, audience, body, created_at, expires_at, state,
                first_devices, first_done, cursor, delivered
            FROM fanouts WHERE state <> 'done' AND owner_node = \(nodeID) ORDER BY created_at, message_id
            """
        ).compactMap { row in
            let (id, project, kind, value, body, created, expires, state, first, firstDone, cursor, delivered) =
                try row.decode(
                    (String, String, String, String, String, Int64, Int64, String, String, Int, String, Int).self)
            guard let audience = StoreCoding.decodeAudience(kind, value) else { return nil }
            return FanoutJob(
                messageID: id, projectID: project, audience: audience, body: body,
                createdAt: Timestamp(milliseconds: created), expiresAt: Timestamp(milliseconds: expires),
                state: FanoutJob.State(rawValue: state) ?? .queued, firstDevices: StoreCoding.decodeDevices(first),
                firstDone: firstDone, cursor: cursor, delivered: delivered)
        }
    }

    /// Stores a page only while this node still holds the job: a node that was taken for
    /// dead and whose job moved on stores nothing more of it.
    public func storeFanoutPage(
        messageID: String, queue: [QueuedMessage], firstDone: Int, cursor: String, reached: Int, done: Bool,
        limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        try await transaction { connection in
            let owned = try await self.count(
                """
                UPDATE fanouts SET first_done = \(firstDone), cursor = \(cursor), delivered = delivered + \(reached),
                    state = \(done ? "done" : "running")
                WHERE message_id = \(messageID) AND owner_node = \(self.nodeID) RETURNING 1
                """, on: connection)
            guard owned > 0 else { throw StoreError.notFound("fanout \(messageID) held by this node") }
            return try await self.enqueue(queue, limits: limits, stats: stats, on: connection)
        }
    }

    public func startFanout(messageID: String, firstDevices: [UInt64]) async throws -> [UInt64] {
        try await run(
            """
            UPDATE fanouts SET state = 'running', first_devices = \(StoreCoding.encode(devices: firstDevices))
            WHERE message_id = \(messageID) AND state = 'queued'
            """)
        let stored = try await rows("SELECT first_devices FROM fanouts WHERE message_id = \(messageID)")
        return try StoreCoding.decodeDevices(stored.first?.decode(String.self) ?? "")
    }

    // MARK: Device groups

    public func createDeviceGroup(_ group: DeviceGroup) async throws {
        try await run(
            """
            INSERT INTO device_groups (notification_key, project_id, name, members)
            VALUES (\(group.notificationKey), \(group.projectID), \(group.name),
                \(StoreCoding.encode(members: group.members)))
            """)
    }

    public func deviceGroup(projectID: String, name: String?, notificationKey: String?) async throws -> DeviceGroup? {
        try await rows(
            """
            SELECT project_id, name, notification_key, members FROM device_groups
            WHERE project_id = \(projectID) AND (\(name)::text IS NULL OR name = \(name))
                AND (\(notificationKey)::text IS NULL OR notification_key = \(notificationKey))
            LIMIT 1
            """
        ).first.map { row in
            let (project, name, key, members) = try row.decode((String, String, String, String).self)
            return DeviceGroup(
                projectID: project, name: name, notificationKey: key, members: StoreCoding.decodeMembers(members))
        }
    }

    public func updateDeviceGroup(projectID: String, notificationKey: String, members: [String]) async throws {
        let changed: Int
        if members.isEmpty {
            changed = try await count(
                """
                DELETE FROM device_groups WHERE project_id = \(projectID) AND notification_key = \(notificationKey)
                RETURNING 1
                """)
        } else {
            changed = try await count(
                """
                UPDATE device_groups SET members = \(StoreCoding.encode(members: members))
                WHERE project_id = \(projectID) AND notification_key = \(notificationKey) RETURNING 1
                """)
        }
        guard changed > 0 else { throw StoreError.notFound("device group") }
    }

    // MARK: Delivery reports

    public func record(_ stats: [DeliveryStat]) async throws {
        guard !stats.isEmpty else { return }
        try await transaction { connection in try await self.record(stats, on: connection) }
    }

    public func deleteAbandonedDevices(checkedInBefore: Timestamp, limit: Int) async throws -> Int {
        try await count(
            """
            DELETE FROM devices WHERE android_id IN (
                SELECT android_id FROM devices
                WHERE created_at < \(checkedInBefore.milliseconds) AND last_connected_at IS NULL
                AND NOT EXISTS (SELECT 1 FROM registrations WHERE registrations.android_id = devices.android_id)
                LIMIT \(limit))
            RETURNING 1
            """)
    }

    public func recordReceipt(_ stat: DeliveryStat, messageID: String, androidID: UInt64) async throws -> Bool {
        try await transaction { connection in
            let inserted = try await self.count(
                """
                INSERT INTO receipts (message_id, android_id, counter)
                VALUES (\(messageID), \(Int64(bitPattern: androidID)), \(stat.counter.rawValue))
                ON CONFLICT DO NOTHING RETURNING 1
                """, on: connection)
            guard inserted == 1 else { return false }
            try await self.record([stat], on: connection)
            return true
        }
    }

    /// Rows each delivery counter is spread over.
    static let counterShards: Int16 = 16

    private func record(_ stats: [DeliveryStat], on connection: PostgresConnection) async throws {
        guard !stats.isEmpty else { return }
        var binds = PostgresBindings()
        let sql = Self.counting(stats, &binds)
        try await run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection)
    }

    /// Adds to delivery counters: a statement or a part of one, its values placed in
    /// `binds`. Every send adds to the same few counters, so each is kept in
    /// `counterShards` rows and a statement adds to one of them: concurrent writers seldom
    /// wait for each other's commit. Sorted, so that two writers take the rows' locks in
    /// the same order.
    private static func counting(_ stats: [DeliveryStat], _ binds: inout PostgresBindings) -> String {
        let totals = StoreCoding.totals(stats).sorted {
            ($0.key.projectID, $0.key.day, $0.key.appID, $0.key.label, $0.counter.rawValue)
                < ($1.key.projectID, $1.key.day, $1.key.appID, $1.key.label, $1.counter.rawValue)
        }
        return """
            INSERT INTO delivery_stats (project_id, day, app_id, label, counter, shard, value)
            SELECT project_id, day, app_id, label, counter, \(binds.place(Int16.random(in: 0..<counterShards))), value
            FROM UNNEST(\(binds.place(totals.map(\.key.projectID)))::text[], \(binds.place(totals.map(\.key.day)))::text[],
                \(binds.place(totals.map(\.key.appID)))::text[], \(binds.place(totals.map(\.key.label)))::text[],
                \(binds.place(totals.map(\.counter.rawValue)))::text[],
                \(binds.place(totals.map { Int64($0.amount) }))::bigint[])
                AS rows(project_id, day, app_id, label, counter, value)
            ON CONFLICT (project_id, day, app_id, label, counter, shard)
            DO UPDATE SET value = delivery_stats.value + excluded.value
            """
    }

    public func deliveryReport(projectID: String, appID: String?, from: CalendarDay, through: CalendarDay)
        async throws -> [DeliveryReportRow]
    {
        let counters = try await rows(
            """
            SELECT day, app_id, label, counter, SUM(value)::bigint FROM delivery_stats
            WHERE project_id = \(projectID) AND day >= \(from.description) AND day <= \(through.description)
                AND (\(appID)::text IS NULL OR app_id = \(appID))
            GROUP BY day, app_id, label, counter
            """
        ).map { row in
            let (day, app, label, counter, value) = try row.decode((String, String, String, String, Int).self)
            return StoreCoding.CounterRow(day: day, appID: app, label: label, counter: counter, value: value)
        }
        let queued = try await rows(
            """
            SELECT created_at, app_id, analytics_label FROM device_queue
            WHERE project_id = \(projectID) AND deleted_count = 0 AND (\(appID)::text IS NULL OR app_id = \(appID))
            """
        ).map { row in
            let (created, app, label) = try row.decode((Int64, String, String).self)
            return StoreCoding.PendingRow(createdAt: Timestamp(milliseconds: created), appID: app, label: label)
        }
        return StoreCoding.report(
            projectID: projectID, counters: counters, queued: queued, from: from, through: through)
    }

    // MARK: Cluster

    public func heartbeat(now: Timestamp, deadAfterMilliseconds: Int64) async throws -> [String] {
        try await run(
            """
            INSERT INTO nodes (id, started_at, heartbeat_at, address)
            VALUES (\(nodeID), \(now.milliseconds), \(now.milliseconds), \(nodeAddress))
            ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, address = excluded.address
            """)
        return try await rows(
            """
            SELECT id FROM nodes WHERE id <> \(nodeID) AND heartbeat_at < \(now.milliseconds - deadAfterMilliseconds)
            ORDER BY id
            """
        ).map { try $0.decode(String.self) }
    }

    public func node(_ id: String) async throws -> NodeRecord? {
        try await rows("SELECT address, heartbeat_at FROM nodes WHERE id = \(id)").first.map { row in
            let (address, heartbeat) = try row.decode((String, Int64).self)
            return NodeRecord(id: id, address: address, heartbeatAt: Timestamp(milliseconds: heartbeat))
        }
    }

    public func leave() async throws {
        try await run("UPDATE nodes SET heartbeat_at = 0 WHERE id = \(nodeID)")
    }

    public func releaseNode(_ node: String) async throws -> Int {
        try await transaction { connection in
            try await self.run(
                "UPDATE devices SET holder_node = NULL WHERE holder_node = \(node)", on: connection)
            try await self.run("DELETE FROM quota_counts WHERE node_id = \(node)", on: connection)
            let adopted = try await self.count(
                """
                UPDATE fanouts SET owner_node = \(self.nodeID)
                WHERE state <> 'done' AND (owner_node = \(node) OR owner_node IS NULL) RETURNING 1
                """, on: connection)
            if node != self.nodeID { try await self.run("DELETE FROM nodes WHERE id = \(node)", on: connection) }
            return adopted
        }
    }

    public func releaseConnection(androidID: UInt64) async throws {
        try await run(
            """
            UPDATE devices SET holder_node = NULL
            WHERE android_id = \(Int64(bitPattern: androidID)) AND holder_node = \(nodeID)
            """)
    }

    public func remoteHolders(androidIDs: [UInt64]) async throws -> [UInt64: String] {
        guard !androidIDs.isEmpty else { return [:] }
        var holders: [UInt64: String] = [:]
        for row in try await rows(
            """
            SELECT android_id, holder_node FROM devices
            WHERE android_id = ANY(\(androidIDs.map { Int64(bitPattern: $0) })) AND holder_node IS NOT NULL
                AND holder_node <> \(nodeID)
            """)
        {
            let (id, node) = try row.decode((Int64, String).self)
            holders[UInt64(bitPattern: id)] = node
        }
        return holders
    }

    public func devicesHeldElsewhere() async throws -> [UInt64] {
        try await rows(
            """
            SELECT android_id FROM devices WHERE holder_node IS NOT NULL AND holder_node <> \(nodeID)
            ORDER BY android_id
            """
        ).map { UInt64(bitPattern: try $0.decode(Int64.self)) }
    }

    /// The channel a node listens on; node ids are free text, so the channel is derived.
    static func channel(of node: String) -> String {
        "herald_node_"
            + node.unicodeScalars.map { scalar in
                CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII ? String(scalar) : "_"
            }.joined().lowercased()
    }

    /// At most this many device ids per notification (PostgreSQL caps a payload at 8,000 bytes).
    static let devicesPerSignal = 300

    public func signal(node: String, androidIDs: [UInt64]) async throws {
        let channel = Self.channel(of: node)
        for start in stride(from: 0, to: androidIDs.count, by: Self.devicesPerSignal) {
            let payload = androidIDs[start..<min(start + Self.devicesPerSignal, androidIDs.count)]
                .map { String($0, radix: 36) }.joined(separator: ",")
            try await run("SELECT pg_notify(\(channel), \(payload))")
        }
    }

    public func listenForSignals(_ receive: @escaping @Sendable ([UInt64]) async -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: Self.channel(of: self.nodeID)) { notifications in
                for try await notification in notifications {
                    await receive(notification.payload.split(separator: ",").compactMap { UInt64($0, radix: 36) })
                }
            }
        }
    }

    public func recentMessages(to targets: [String], minuteSince: Timestamp, hourSince: Timestamp) async throws
        -> RecentMessages
    {
        guard
            let row = try await rows(
                """
                SELECT COUNT(*) FILTER (WHERE created_at > \(minuteSince.milliseconds)),
                    MIN(created_at) FILTER (WHERE created_at > \(minuteSince.milliseconds)), COUNT(*), MIN(created_at)
                FROM messages WHERE target = ANY(\(targets)) AND created_at > \(hourSince.milliseconds)
                """
            ).first
        else { return RecentMessages(minute: 0, hour: 0, oldestInMinute: nil, oldestInHour: nil) }
        let (minute, oldestInMinute, hour, oldestInHour) = try row.decode((Int, Int64?, Int, Int64?).self)
        return RecentMessages(
            minute: minute, hour: hour, oldestInMinute: oldestInMinute.map(Timestamp.init(milliseconds:)),
            oldestInHour: oldestInHour.map(Timestamp.init(milliseconds:)))
    }

    public func exchangeQuotaCounts(quota: String, mine: [QuotaCount], since: Timestamp) async throws -> [QuotaCount] {
        try await transaction { connection in
            if !mine.isEmpty {
                try await self.run(
                    """
                    INSERT INTO quota_counts (quota, project_id, node_id, bucket, count)
                    SELECT \(quota), project_id, \(self.nodeID), bucket, count
                    FROM UNNEST(\(mine.map(\.projectID))::text[], \(mine.map(\.bucket))::bigint[],
                        \(mine.map { Int64($0.count) })::bigint[]) AS rows(project_id, bucket, count)
                    ON CONFLICT (quota, project_id, node_id, bucket) DO UPDATE SET count = excluded.count
                    """, on: connection)
            }
            try await self.run(
                "DELETE FROM quota_counts WHERE quota = \(quota) AND bucket < \(since.milliseconds)", on: connection)
            return try await self.rows(
                """
                SELECT project_id, bucket, SUM(count)::bigint FROM quota_counts
                WHERE quota = \(quota) AND node_id <> \(self.nodeID) AND bucket >= \(since.milliseconds)
                GROUP BY project_id, bucket
                """, on: connection
            ).map { row in
                let (project, bucket, count) = try row.decode((String, Int64, Int).self)
                return QuotaCount(projectID: project, bucket: bucket, count: count)
            }
        }
    }

    // MARK: Helpers

    /// Runs `body` in a transaction on one pooled connection, retrying a deadlock or a
    /// serialisation failure; turns constraint failures into `StoreError`s.
    private func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await client.withConnection { connection in
                    try await connection.query("BEGIN", logger: self.logger)
                    do {
                        let result = try await body(connection)
                        try await connection.query("COMMIT", logger: self.logger)
                        return result
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: self.logger)
                        throw error
                    }
                }
            } catch let error as PSQLError {
                let state = error.serverInfo?[.sqlState]
                if (state == "40P01" || state == "40001") && attempt < 5 { continue }
                throw Self.storeError(error)
            }
        }
    }

    /// Runs one statement, which is a transaction of its own.
    private func run(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }

    private func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws {
        _ = try await connection.query(query, logger: logger).collect()
    }

    private func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        do {
            return try await client.query(query, logger: logger).collect()
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    private func rows(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [PostgresRow] {
        try await connection.query(query, logger: logger).collect()
    }

    private func count(_ query: PostgresQuery) async throws -> Int {
        try await rows(query).count
    }

    private func count(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> Int {
        try await rows(query, on: connection).count
    }

    private static func storeError(_ error: PSQLError) -> any Error {
        let message = error.serverInfo?[.message] ?? "\(error)"
        switch error.serverInfo?[.sqlState] {
        case "23505": return StoreError.conflict(message)
        case "23503": return StoreError.notFound(message)
        case let state?: return Failure(description: "PostgreSQL error \(state): \(message)")
        default: return error
        }
    }

    private func insert(_ key: ServiceAccountKey, on connection: PostgresConnection) async throws {
        try await run(
            """
            INSERT INTO service_account_keys (id, project_id, client_email, public_key_pem, created_at, revoked_at)
            VALUES (\(key.id), \(key.projectID), \(key.clientEmail), \(key.publicKeyPEM), \(key.createdAt.milliseconds),
                \(key.revokedAt?.milliseconds))
            """, on: connection)
    }

    private func bumpRevision(_ connection: PostgresConnection) async throws {
        try await run("UPDATE counters SET value = value + 1 WHERE name = 'credentials_revision'", on: connection)
    }

    static let projectColumns = "id, number, api_key, server_key, created_at, settings"

    private static func project(_ row: PostgresRow) throws -> Project {
        let (id, number, apiKey, serverKey, created, settings) = try row.decode(
            (String, Int64, String, String, Int64, String).self)
        return Project(
            id: id, number: number, apiKey: apiKey, serverKey: serverKey, createdAt: Timestamp(milliseconds: created),
            settings: try StoreCoding.decodeSettings(settings))
    }

    static let keyColumns = "id, project_id, client_email, public_key_pem, created_at, revoked_at"

    private static func key(_ row: PostgresRow) throws -> ServiceAccountKey {
        let (id, project, email, pem, created, revoked) = try row.decode(
            (String, String, String, String, Int64, Int64?).self)
        return ServiceAccountKey(
            id: id, projectID: project, clientEmail: email, publicKeyPEM: pem,
            createdAt: Timestamp(milliseconds: created), revokedAt: revoked.map(Timestamp.init(milliseconds:)))
    }

    static let registrationColumns = SQLiteStore.registrationColumns

    private static func registration(_ row: PostgresRow) throws -> Registration {
        let (
            token, kind, project, sender, app, subtype, platform, device, installation, p256dh, auth, coding, created,
            deleted
        ) = try row.decode(
            (
                String, String, String?, String, String, String?, String, Int64, String?, ByteBuffer?, ByteBuffer?,
                String?, Int64, Int64?
            ).self)
        var keys: WebPushKeys?
        if let p256dh, let auth {
            keys = WebPushKeys(
                p256dh: Array(p256dh.readableBytesView), auth: Array(auth.readableBytesView), coding: coding ?? "aesgcm"
            )
        }
        return Registration(
            token: token, kind: Registration.Kind(rawValue: kind) ?? .app, projectID: project, sender: sender,
            appID: app, subtype: subtype, platform: Platform(rawValue: platform) ?? .android,
            androidID: UInt64(bitPattern: device), installationID: installation, webKeys: keys,
            createdAt: Timestamp(milliseconds: created), deletedAt: deleted.map(Timestamp.init(milliseconds:)))
    }

    static let queueColumns = SQLiteStore.queueColumns(stanza: "stanza")
    static let admissionColumns = SQLiteStore.queueColumns(stanza: "''::bytea AS stanza")

    private static func queued(_ row: PostgresRow) throws -> QueuedMessage {
        let (
            sequence, device, token, persistentID, messageID, project, stanza, created, expires, collapseKey, high,
            app, label, deleted
        ) = try row.decode(
            (
                Int64, Int64, String, String, String, String, ByteBuffer, Int64, Int64, String?, Bool, String, String,
                Int64
            ).self)
        return QueuedMessage(
            sequence: sequence, androidID: UInt64(bitPattern: device), token: token, persistentID: persistentID,
            messageID: messageID, projectID: project, stanza: Array(stanza.readableBytesView),
            createdAt: Timestamp(milliseconds: created), expiresAt: Timestamp(milliseconds: expires),
            collapseKey: collapseKey, isHighPriority: high, appID: app, analyticsLabel: label,
            deletedCount: Int(deleted))
    }
}

extension PostgresBindings {
    /// Binds `value` and answers its placeholder, for statements put together from parts.
    mutating func place<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        append(value)
        return "$\(count)"
    }
}
