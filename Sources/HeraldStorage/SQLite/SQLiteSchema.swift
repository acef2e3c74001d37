import GRDB
import HeraldCore

/// The embedded store's schema: every migration, in order.
extension SQLiteStore {
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
        migrator.registerMigration("v11-message-labels") { db in
            // Receipts are counted under the message's label without reading its body again.
            try db.execute(
                sql: """
                    ALTER TABLE messages ADD COLUMN analytics_label TEXT NOT NULL DEFAULT '';
                    UPDATE messages SET analytics_label = COALESCE(
                        json_extract(body, '$.android.fcm_options.analytics_label'),
                        json_extract(body, '$.fcm_options.analytics_label'), '')
                    WHERE json_valid(body);
                    """)
        }
        migrator.registerMigration("v12-upstream") { db in
            // Upstream messages and delivery receipts for app servers (`UpstreamStore`); a
            // queue row of a message sent with a receipt requested names the app server's id.
            try db.execute(
                sql: """
                    ALTER TABLE device_queue ADD COLUMN receipt_id TEXT NOT NULL DEFAULT '';
                    CREATE TABLE upstream_messages (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        token TEXT NOT NULL,
                        category TEXT NOT NULL,
                        android_id INTEGER NOT NULL,
                        data TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        holder TEXT NOT NULL DEFAULT '',
                        leased_until INTEGER NOT NULL DEFAULT 0,
                        UNIQUE (project_id, message_id, kind, token)
                    );
                    CREATE INDEX upstream_messages_project ON upstream_messages(project_id, sequence);
                    CREATE INDEX upstream_messages_expiry ON upstream_messages(expires_at);
                    CREATE INDEX upstream_messages_holder ON upstream_messages(holder) WHERE holder != '';
                    CREATE INDEX upstream_messages_device ON upstream_messages(android_id) WHERE kind = 'message';
                    """)
        }
        migrator.registerMigration("v13-queue-rows-without-project") { db in
            // A push message to a browser's or a client's push channel (RFC 8030) belongs to no
            // project: its queue row has no project id.
            try db.execute(
                sql: """
                    CREATE TABLE device_queue_new (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        android_id INTEGER NOT NULL,
                        token TEXT NOT NULL,
                        persistent_id TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
                        stanza BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        collapse_key TEXT,
                        is_high_priority INTEGER NOT NULL DEFAULT 0,
                        app_id TEXT NOT NULL DEFAULT '',
                        analytics_label TEXT NOT NULL DEFAULT '',
                        deleted_count INTEGER NOT NULL DEFAULT 0,
                        stanza_id INTEGER,
                        receipt_id TEXT NOT NULL DEFAULT ''
                    );
                    INSERT INTO device_queue_new
                        (sequence, android_id, token, persistent_id, message_id, project_id, stanza, created_at,
                         expires_at, collapse_key, is_high_priority, app_id, analytics_label, deleted_count, stanza_id,
                         receipt_id)
                        SELECT sequence, android_id, token, persistent_id, message_id, project_id, stanza, created_at,
                            expires_at, collapse_key, is_high_priority, app_id, analytics_label, deleted_count,
                            stanza_id, receipt_id
                        FROM device_queue;
                    DROP TABLE device_queue;
                    ALTER TABLE device_queue_new RENAME TO device_queue;
                    CREATE INDEX device_queue_device ON device_queue(android_id, sequence);
                    CREATE INDEX device_queue_expiry ON device_queue(expires_at);
                    CREATE INDEX device_queue_stanza ON device_queue(stanza_id) WHERE stanza_id IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v14-push-receipts") { db in
            // Receipts of Web Push messages (RFC 8030 §5.1) waiting for their senders.
            try db.execute(
                sql: """
                    CREATE TABLE push_receipts (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        subscription TEXT NOT NULL,
                        token TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        acknowledged_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        UNIQUE (subscription, token, message_id)
                    );
                    CREATE INDEX push_receipts_subscription ON push_receipts(subscription, sequence);
                    CREATE INDEX push_receipts_expiry ON push_receipts(expires_at);
                    """)
        }
        migrator.registerMigration("v15-console") { db in
            // The console's users (bcrypt hashes) and its sessions, keyed by a hash of the cookie.
            try db.execute(
                sql: """
                    CREATE TABLE console_users (
                        name TEXT PRIMARY KEY,
                        password_hash TEXT NOT NULL,
                        admin INTEGER NOT NULL,
                        projects TEXT NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE console_values (
                        key TEXT PRIMARY KEY,
                        value BLOB NOT NULL,
                        expires_at INTEGER
                    );
                    CREATE INDEX console_values_expiry ON console_values(expires_at) WHERE expires_at IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v16-scheduled-sends") { db in
            // Sends the console schedules; ready_at is when one may next be claimed.
            try db.execute(
                sql: """
                    CREATE TABLE scheduled_sends (
                        id TEXT PRIMARY KEY,
                        project_id TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        body TEXT NOT NULL,
                        summary TEXT NOT NULL,
                        due_at INTEGER NOT NULL,
                        created_by TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        state TEXT NOT NULL,
                        attempts INTEGER NOT NULL,
                        leased_until INTEGER NOT NULL,
                        outcome TEXT NOT NULL,
                        ready_at INTEGER
                    );
                    CREATE INDEX scheduled_sends_ready ON scheduled_sends(ready_at) WHERE ready_at IS NOT NULL;
                    CREATE INDEX scheduled_sends_project ON scheduled_sends(project_id, due_at);
                    """)
        }
        migrator.registerMigration("v17-error-counts") { db in
            // The errors each project was answered with, per hour, code and status.
            try db.execute(
                sql: """
                    CREATE TABLE error_counts (
                        project_id TEXT NOT NULL,
                        hour INTEGER NOT NULL,
                        code TEXT NOT NULL,
                        status INTEGER NOT NULL,
                        value INTEGER NOT NULL,
                        PRIMARY KEY (project_id, hour, code, status)
                    );
                    CREATE INDEX error_counts_hour ON error_counts(hour);
                    """)
        }
        migrator.registerMigration("v18-pending-counts") { db in
            // The messages still queued per project, day (of acceptance, days since 1970),
            // app and label, kept in the transactions that store and delete queue rows
            // (`PendingCounts`), so that a delivery report reads a few rows, not the queue.
            try db.execute(
                sql: """
                    CREATE TABLE pending_counts (
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        day INTEGER NOT NULL,
                        app_id TEXT NOT NULL,
                        label TEXT NOT NULL,
                        value INTEGER NOT NULL,
                        PRIMARY KEY (project_id, day, app_id, label)
                    ) WITHOUT ROWID;
                    INSERT INTO pending_counts (project_id, day, app_id, label, value)
                        SELECT project_id, created_at / 86400000, app_id, analytics_label, COUNT(*) FROM device_queue
                        WHERE project_id IS NOT NULL AND deleted_count = 0
                        GROUP BY project_id, created_at / 86400000, app_id, analytics_label;
                    """)
        }
        migrator.registerMigration("v19-apns-credentials") { db in
            // A project's credentials for Apple's push service: one of each kind, the
            // secret (a .p8 key's PEM, or a certificate as PEM or PKCS#12) kept like the
            // other secrets, in this owner-only file.
            try db.execute(
                sql: """
                    CREATE TABLE apns_credentials (
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL,
                        bundle_id TEXT NOT NULL,
                        environment TEXT NOT NULL,
                        key_id TEXT NOT NULL,
                        team_id TEXT NOT NULL,
                        secret BLOB NOT NULL,
                        password TEXT,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (project_id, kind)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v20-apns-hand-offs") { db in
            // An Apple app instance's APNs address (`p_<hex>` or `s_<hex>`), and when each
            // queue entry of a device reached through APNs is next due for its hand-off.
            try db.execute(
                sql: """
                    ALTER TABLE registrations ADD COLUMN apns TEXT;
                    CREATE INDEX registrations_apns ON registrations(project_id, apns) WHERE apns IS NOT NULL;
                    ALTER TABLE device_queue ADD COLUMN hand_off_at INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX device_queue_hand_off ON device_queue(hand_off_at, sequence)
                        WHERE android_id < \(Device.handOffIDs.upperBound);
                    """)
        }
        migrator.registerMigration("v21-upstream-waiting") { db in
            // What waits for each project's app servers, counted as rows come and go, so that
            // an upstream message's limit is read at once rather than by counting the rows.
            try db.execute(
                sql: """
                    CREATE TABLE upstream_waiting (
                        project_id TEXT PRIMARY KEY,
                        waiting INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    INSERT INTO upstream_waiting (project_id, waiting)
                        SELECT project_id, COUNT(*) FROM upstream_messages GROUP BY project_id;
                    CREATE TRIGGER upstream_waiting_added AFTER INSERT ON upstream_messages BEGIN
                        INSERT INTO upstream_waiting (project_id, waiting) VALUES (NEW.project_id, 1)
                            ON CONFLICT (project_id) DO UPDATE SET waiting = waiting + 1;
                    END;
                    CREATE TRIGGER upstream_waiting_removed AFTER DELETE ON upstream_messages BEGIN
                        UPDATE upstream_waiting SET waiting = waiting - 1 WHERE project_id = OLD.project_id;
                    END;
                    """)
        }
        migrator.registerMigration("v22-events") { db in
            // What became of every message (SEMANTICS E1): one row a fact, and the counts of
            // the facts kept only as counts (E2). A queue entry says which of the two it makes.
            // Events are removed oldest first by sequence, so their time needs no index.
            try db.execute(
                sql: """
                    ALTER TABLE device_queue ADD COLUMN keeps_events INTEGER NOT NULL DEFAULT 1;
                    CREATE TABLE events (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        message_id TEXT NOT NULL,
                        type TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        app_id TEXT NOT NULL,
                        token TEXT NOT NULL,
                        label TEXT NOT NULL,
                        node TEXT NOT NULL,
                        at INTEGER NOT NULL,
                        target_kind TEXT NOT NULL,
                        target TEXT NOT NULL,
                        expires_at INTEGER NOT NULL
                    );
                    CREATE INDEX events_project ON events(project_id, sequence);
                    CREATE INDEX events_message ON events(message_id, sequence);
                    CREATE TABLE message_counts (
                        message_id TEXT NOT NULL,
                        type TEXT NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        value INTEGER NOT NULL,
                        at INTEGER NOT NULL,
                        PRIMARY KEY (message_id, type)
                    ) WITHOUT ROWID;
                    CREATE INDEX message_counts_project ON message_counts(project_id);
                    CREATE INDEX message_counts_time ON message_counts(at);
                    """)
        }
        migrator.registerMigration("v23-webhooks") { db in
            // Projects' webhooks; ready_at is when one may next be claimed (NULL while paused).
            try db.execute(
                sql: """
                    CREATE TABLE webhooks (
                        id TEXT PRIMARY KEY,
                        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        url TEXT NOT NULL,
                        secret TEXT NOT NULL,
                        types TEXT NOT NULL,
                        state TEXT NOT NULL,
                        cursor INTEGER NOT NULL,
                        failures INTEGER NOT NULL,
                        failing_since INTEGER,
                        next_attempt_at INTEGER NOT NULL,
                        last_errors TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        holder TEXT NOT NULL DEFAULT '',
                        ready_at INTEGER
                    );
                    CREATE INDEX webhooks_project ON webhooks(project_id, created_at);
                    CREATE INDEX webhooks_ready ON webhooks(ready_at) WHERE ready_at IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v24-release-marks") { db in
            try db.execute(sql: "CREATE TABLE release_marks (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        }
        migrator.registerMigration("v25-fcm-relay-credentials") { db in
            // A project's Google service-account key for the hand-off to FCM, its private key
            // kept like the other secrets, in this owner-only file.
            try db.execute(
                sql: """
                    CREATE TABLE fcm_relay_credentials (
                        project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
                        google_project_id TEXT NOT NULL,
                        client_email TEXT NOT NULL,
                        private_key_id TEXT NOT NULL,
                        private_key BLOB NOT NULL,
                        token_uri TEXT NOT NULL,
                        created_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v26-web-push-keys") { db in
            // A project's application server key pair for the hand-off to browsers' push
            // services, its private key kept like the other secrets, in this owner-only file.
            try db.execute(
                sql: """
                    CREATE TABLE web_push_keys (
                        project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
                        private_key BLOB NOT NULL,
                        public_key BLOB NOT NULL,
                        created_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }
}
