"""Upgrades: a store written by the previous release (compat/fixtures, written by
upgrade_fixture.py with that release's binary) opens with this one, and every message
that waited in it is delivered; the project's key still sends."""
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HERALD
from crash import Server, collect
from test_semantics import Device
from upgrade_fixture import fixture_path

PREVIOUS = "0.9.0"


def test_herald_names_its_semantic_version():
    output = subprocess.run([HERALD, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert output.count(".") == 2 and all(part.isdigit() for part in output.split("."))
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "CHANGELOG.md")) as f:
        assert f"## {output} " in f.read()


def unpack(store):
    """The fixture in a new directory, its manifest, and the time it moved forward by: the
    fixture's messages carry 28-day expiry times from when it was written, which the test
    moves to today (by the same amount everywhere) so that they have not run out."""
    directory = tempfile.mkdtemp(prefix="herald-upgrade-")
    with tarfile.open(fixture_path(PREVIOUS, store)) as archive:
        archive.extractall(directory, filter="data")
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    shift = max(0, int(time.time()) - manifest["written_at"]) * 1000
    return directory, manifest, shift


def shift_sqlite(path, shift):
    import sqlite3

    with sqlite3.connect(path) as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if "expires_at" in [row[1] for row in db.execute(f"PRAGMA table_info({table})")]:
                db.execute(f"UPDATE {table} SET expires_at = expires_at + ? WHERE expires_at IS NOT NULL", (shift,))


def shift_postgres(url, shift):
    statement = f"""DO $$ DECLARE t text; BEGIN
        FOR t IN SELECT table_name FROM information_schema.columns
                 WHERE column_name = 'expires_at' AND table_schema = 'public' LOOP
            EXECUTE format('UPDATE %I SET expires_at = expires_at + {shift} WHERE expires_at IS NOT NULL', t);
        END LOOP; END $$"""
    subprocess.run(["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c", statement], check=True, capture_output=True)


def upgrade_and_deliver(directory, manifest, store_url=None):
    server = Server(directory, store_url)
    project = {"id": manifest["project"], "api_key": manifest["api_key"]}
    server.projects["compat-semantics"] = project
    devices = []
    try:
        server.start()
        devices = [Device(server, os.path.join(directory, d["identity"])) for d in manifest["devices"]]
        assert [device.token for device in devices] == [d["token"] for d in manifest["devices"]]
        received = [[] for _ in devices]
        deadline = time.time() + 30
        while time.time() < deadline:
            for device, into in zip(devices, received):
                collect(device, into)
            if all(set(d["owed"]) <= set(got) for d, got in zip(manifest["devices"], received)):
                break
            time.sleep(0.2)
        for d, got in zip(manifest["devices"], received):
            assert sorted(got) == sorted(d["owed"]), "every waiting message, each once"
        # The project's service account key, pointed at this server, still sends.
        key_file = os.path.join(directory, manifest["key_file"])
        with open(key_file) as f:
            key = json.load(f)
        key["token_uri"] = f"{server.url}/token"
        with open(key_file, "w") as f:
            json.dump(key, f)
        app = herald_sdk.initialize(server.url, key_file, name=f"upgrade-{id(server)}")
        name = messaging.send(messaging.Message(token=devices[0].token, data={"after": "upgrade"}), app=app)
        assert devices[0].message()["id"] == name.rsplit("/", 1)[1]
    finally:
        for device in devices:
            if device.process.poll() is None:
                device.process.kill()
        server.stop()


def test_a_previous_release_sqlite_store_delivers_everything_that_waited():
    directory, manifest, shift = unpack("sqlite")
    try:
        shift_sqlite(os.path.join(directory, "data", "herald.sqlite"), shift)
        upgrade_and_deliver(directory, manifest)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.skipif(not os.environ.get("HERALD_TEST_POSTGRES"), reason="needs HERALD_TEST_POSTGRES")
def test_a_previous_release_postgresql_store_delivers_everything_that_waited():
    from test_cluster import new_database

    directory, manifest, shift = unpack("postgres")
    url = new_database()
    try:
        subprocess.run(["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-f", os.path.join(directory, "store.sql")],
                       check=True, capture_output=True)
        shift_postgres(url, shift)
        upgrade_and_deliver(directory, manifest, url)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
