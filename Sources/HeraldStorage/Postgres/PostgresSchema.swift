import HeraldCore
import PostgresNIO

/// The shared store's schema: every migration, in order.
extension PostgresStore {
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
        (
            // Receipts are counted under the message's label without reading its body again.
            "v7-message-labels",
            [
                "ALTER TABLE messages ADD COLUMN analytics_label TEXT NOT NULL DEFAULT ''",
                """
                UPDATE messages SET analytics_label = COALESCE(
                    body::jsonb #>> '{android,fcm_options,analytics_label}',
                    body::jsonb #>> '{fcm_options,analytics_label}', '')
                """,
            ]
        ),
        (
            // Upstream messages and delivery receipts for app servers (`UpstreamStore`); a
            // queue row of a message sent with a receipt requested names the app server's id.
            "v8-upstream",
            [
                "ALTER TABLE device_queue ADD COLUMN receipt_id TEXT NOT NULL DEFAULT ''",
                """
                CREATE TABLE upstream_messages (
                    sequence BIGSERIAL PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    token TEXT NOT NULL,
                    category TEXT NOT NULL,
                    android_id BIGINT NOT NULL,
                    data TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    holder TEXT NOT NULL DEFAULT '',
                    leased_until BIGINT NOT NULL DEFAULT 0,
                    UNIQUE (project_id, message_id, kind, token))
                """,
                "CREATE INDEX upstream_messages_project ON upstream_messages(project_id, sequence)",
                "CREATE INDEX upstream_messages_expiry ON upstream_messages(expires_at)",
                "CREATE INDEX upstream_messages_holder ON upstream_messages(holder) WHERE holder <> ''",
                "CREATE INDEX upstream_messages_device ON upstream_messages(android_id) WHERE kind = 'message'",
            ]
        ),
        (
            // A push message to a push channel (RFC 8030) belongs to no project.
            "v9-queue-rows-without-project",
            ["ALTER TABLE device_queue ALTER COLUMN project_id DROP NOT NULL"]
        ),
        (
            "v10-push-receipts",
            [
                """
                CREATE TABLE push_receipts (
                    sequence BIGSERIAL PRIMARY KEY,
                    subscription TEXT NOT NULL,
                    token TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    acknowledged_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    UNIQUE (subscription, token, message_id))
                """,
                "CREATE INDEX push_receipts_subscription ON push_receipts(subscription, sequence)",
                "CREATE INDEX push_receipts_expiry ON push_receipts(expires_at)",
            ]
        ),
        (
            // The console's users (bcrypt hashes) and its sessions, keyed by a hash of the cookie.
            "v11-console",
            [
                """
                CREATE TABLE console_users (
                    name TEXT PRIMARY KEY,
                    password_hash TEXT NOT NULL,
                    admin BOOLEAN NOT NULL,
                    projects TEXT NOT NULL,
                    created_at BIGINT NOT NULL)
                """,
                "CREATE TABLE console_values (key TEXT PRIMARY KEY, value BYTEA NOT NULL, expires_at BIGINT)",
                "CREATE INDEX console_values_expiry ON console_values(expires_at) WHERE expires_at IS NOT NULL",
            ]
        ),
        (
            // Sends the console schedules; ready_at is when one may next be claimed.
            "v12-scheduled-sends",
            [
                """
                CREATE TABLE scheduled_sends (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    summary TEXT NOT NULL,
                    due_at BIGINT NOT NULL,
                    created_by TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    leased_until BIGINT NOT NULL,
                    outcome TEXT NOT NULL,
                    ready_at BIGINT)
                """,
                "CREATE INDEX scheduled_sends_ready ON scheduled_sends(ready_at) WHERE ready_at IS NOT NULL",
                "CREATE INDEX scheduled_sends_project ON scheduled_sends(project_id, due_at)",
            ]
        ),
        (
            // The errors each project was answered with, per hour, code and status.
            "v13-error-counts",
            [
                """
                CREATE TABLE error_counts (
                    project_id TEXT NOT NULL,
                    hour BIGINT NOT NULL,
                    code TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    value BIGINT NOT NULL,
                    PRIMARY KEY (project_id, hour, code, status))
                """,
                "CREATE INDEX error_counts_hour ON error_counts(hour)",
            ]
        ),
        (
            "v14-apns-credentials",
            [
                """
                CREATE TABLE apns_credentials (
                    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    key_id TEXT NOT NULL,
                    team_id TEXT NOT NULL,
                    secret BYTEA NOT NULL,
                    password TEXT,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (project_id, kind))
                """
            ]
        ),
        (
            // An Apple app instance's APNs address, and when each queue entry of a device
            // reached through APNs is next due for its hand-off.
            "v15-apns-hand-offs",
            [
                "ALTER TABLE registrations ADD COLUMN apns TEXT",
                "CREATE INDEX registrations_apns ON registrations(project_id, apns) WHERE apns IS NOT NULL",
                "ALTER TABLE device_queue ADD COLUMN hand_off_at BIGINT NOT NULL DEFAULT 0",
                """
                CREATE INDEX device_queue_hand_off ON device_queue(hand_off_at, sequence)
                    WHERE android_id < \(Device.handOffIDs.upperBound)
                """,
            ]
        ),
        (
            // What became of every message (SEMANTICS E1): one row a fact, and the counts of
            // the facts kept only as counts (E2). A queue entry says which of the two it makes.
            "v16-events",
            [
                "ALTER TABLE device_queue ADD COLUMN keeps_events INTEGER NOT NULL DEFAULT 1",
                """
                CREATE TABLE events (
                    sequence BIGSERIAL PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    message_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    token TEXT NOT NULL,
                    label TEXT NOT NULL,
                    node TEXT NOT NULL,
                    at BIGINT NOT NULL,
                    target_kind TEXT NOT NULL,
                    target TEXT NOT NULL,
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX events_project ON events(project_id, sequence)",
                "CREATE INDEX events_message ON events(message_id, sequence)",
                """
                CREATE TABLE message_counts (
                    message_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    value BIGINT NOT NULL,
                    at BIGINT NOT NULL,
                    PRIMARY KEY (message_id, type)
                )
                """,
                "CREATE INDEX message_counts_project ON message_counts(project_id)",
                "CREATE INDEX message_counts_time ON message_counts(at)",
            ]
        ),
        (
            // Projects' webhooks; ready_at is when one may next be claimed (NULL while paused).
            "v17-webhooks",
            [
                """
                CREATE TABLE webhooks (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    url TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    types TEXT NOT NULL,
                    state TEXT NOT NULL,
                    cursor BIGINT NOT NULL,
                    failures BIGINT NOT NULL,
                    failing_since BIGINT,
                    next_attempt_at BIGINT NOT NULL,
                    last_errors TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    holder TEXT NOT NULL DEFAULT '',
                    ready_at BIGINT
                )
                """,
                "CREATE INDEX webhooks_project ON webhooks(project_id, created_at)",
                "CREATE INDEX webhooks_ready ON webhooks(ready_at) WHERE ready_at IS NOT NULL",
            ]
        ),
        ("v18-release-marks", ["CREATE TABLE release_marks (name TEXT PRIMARY KEY, value TEXT NOT NULL)"]),
        (
            // A project's Google service-account key for the hand-off to FCM.
            "v19-fcm-relay-credentials",
            [
                """
                CREATE TABLE fcm_relay_credentials (
                    project_id TEXT COLLATE "C" PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
                    google_project_id TEXT NOT NULL,
                    client_email TEXT NOT NULL,
                    private_key_id TEXT NOT NULL,
                    private_key BYTEA NOT NULL,
                    token_uri TEXT NOT NULL,
                    created_at BIGINT NOT NULL)
                """
            ]
        ),
        (
            "v20-web-push-keys",
            [
                """
                CREATE TABLE web_push_keys (
                    project_id TEXT COLLATE "C" PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
                    private_key BYTEA NOT NULL,
                    public_key BYTEA NOT NULL,
                    created_at BIGINT NOT NULL)
                """
            ]
        ),
        (
            // Writes that create background work, from any writer, tell every node
            // (`PostgresStore+Work`); sends are told of by the node after their commit.
            "v21-work-notices",
            [
                """
                CREATE FUNCTION herald_work_notice() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM pg_notify('herald_work', TG_ARGV[0]);
                    RETURN NULL;
                END $$
                """,
                """
                CREATE TRIGGER scheduled_sends_work AFTER INSERT ON scheduled_sends
                FOR EACH STATEMENT EXECUTE FUNCTION herald_work_notice('scheduled')
                """,
                """
                CREATE TRIGGER webhooks_created_work AFTER INSERT ON webhooks
                FOR EACH STATEMENT EXECUTE FUNCTION herald_work_notice('events')
                """,
                """
                CREATE TRIGGER webhooks_state_work AFTER UPDATE OF state ON webhooks
                FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION herald_work_notice('events')
                """,
                """
                CREATE TRIGGER credentials_work AFTER UPDATE ON counters
                FOR EACH STATEMENT EXECUTE FUNCTION herald_work_notice('credentials')
                """,
            ]
        ),
    ]

    func migrate() async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7265726)", logger: self.logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS herald_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)",
                logger: self.logger)
            let applied = Set(
                try await self.rows("SELECT name FROM herald_migrations", on: connection).map {
                    try $0.decode(String.self)
                })
            try await self.release(on: connection).check()
            for migration in Self.migrations where !applied.contains(migration.name) {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                }
                try await connection.query(
                    "INSERT INTO herald_migrations (name, applied_at) VALUES (\(migration.name), now())",
                    logger: self.logger)
                self.logger.info("database migrated", metadata: ["migration": "\(migration.name)"])
            }
            for (name, value) in try await self.release(on: connection).opened().rows {
                try await connection.query(
                    """
                    INSERT INTO release_marks (name, value) VALUES (\(name), \(value))
                    ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value
                    """, logger: self.logger)
            }
        }
    }

    /// The database's release marks (none before the `v18-release-marks` migration).
    func release(on connection: PostgresConnection) async throws -> StoreRelease {
        let exists = try await rows("SELECT to_regclass('release_marks') IS NOT NULL", on: connection)
        guard try exists.first?.decode(Bool.self) == true else {
            return StoreRelease(oldestReader: nil, newestWriter: nil)
        }
        return StoreRelease(
            rows: try await rows("SELECT name, value FROM release_marks", on: connection).map {
                try $0.decode((String, String).self)
            })
    }
}
