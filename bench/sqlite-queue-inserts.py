"""How fast SQLite inserts device-queue rows of Herald's shape, with and without the random
keys (token index, unique device + persistent id) the queue table once had; and what
checkpointing inside the writer costs. Python's sqlite3, WAL, synchronous=NORMAL, 500 rows
a transaction, 100,000 rows. Usage: python3 bench/sqlite-queue-inserts.py"""
import os
import secrets
import sqlite3
import tempfile
import time

COLUMNS = ("android_id, token, persistent_id, message_id, project_id, stanza, created_at, expires_at, "
           "collapse_key, is_high_priority, app_id, analytics_label, deleted_count")


def rows(n):
    return [(secrets.randbits(62), secrets.token_urlsafe(22) + ":APA91b" + secrets.token_urlsafe(100),
             "0:1763791234567890%abcdef#" + secrets.token_urlsafe(16), "0:1763791234567890%abcdef", "bench-project",
             os.urandom(180), 1763791234567, 1766383234567, None, 0, "com.example.app", "", 0) for _ in range(n)]


def run(label, data, token_index, unique, autocheckpoint=1000):
    with tempfile.TemporaryDirectory() as directory:
        db = sqlite3.connect(os.path.join(directory, "q.sqlite"), isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")
        db.execute(f"""CREATE TABLE q (sequence INTEGER PRIMARY KEY AUTOINCREMENT, android_id INTEGER NOT NULL,
            token TEXT NOT NULL, persistent_id TEXT NOT NULL, message_id TEXT NOT NULL, project_id TEXT NOT NULL,
            stanza BLOB, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, collapse_key TEXT,
            is_high_priority INTEGER, app_id TEXT, analytics_label TEXT, deleted_count INTEGER
            {", UNIQUE (android_id, persistent_id)" if unique else ""})""")
        db.execute("CREATE INDEX qd ON q(android_id, sequence)")
        if token_index:
            db.execute("CREATE INDEX qt ON q(token, sequence)")
        db.execute("CREATE INDEX qe ON q(expires_at)")
        started = time.time()
        for start in range(0, len(data), 500):
            db.execute("BEGIN")
            db.executemany(f"INSERT INTO q ({COLUMNS}) VALUES ({', '.join('?' * 13)})", data[start:start + 500])
            db.execute("COMMIT")
        print(f"{label}: {len(data) / (time.time() - started):,.0f} rows/s")


data = rows(100_000)
run("token index and unique (device, persistent id)", data, True, True)
run("unique (device, persistent id) only", data, False, True)
run("device and expiry indexes only (Herald now)", data, False, False)
run("device and expiry indexes only, no checkpoint in the writer", data, False, False, autocheckpoint=0)
