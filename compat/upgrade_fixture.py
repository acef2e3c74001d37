"""Stores written by a released Herald, kept so that each new version is tested opening
them (compat/test_upgrade.py). A fixture is a data directory (the gateway's certificate
authority, and the SQLite store) or a PostgreSQL dump, with the project's key file, three
app instances' identities, and the ids of the messages that wait for them.

Written with the release's own binary, once per released schema version:
    HERALD_BIN=/path/to/herald-0.9.0 ../.venv/bin/python upgrade_fixture.py 0.9.0
(PostgreSQL fixtures need HERALD_TEST_POSTGRES: run it under scripts/with-postgres.)"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse

from firebase_admin import messaging

import herald_sdk
from conftest import printed_fields
from crash import Server
from test_semantics import Device

PROJECT = "upgrade-fixture"
HERE = os.path.dirname(os.path.abspath(__file__))


def fixture_path(version, store):
    return os.path.join(HERE, "fixtures", f"store-{version}-{store}.tar.gz")


def write(version, store):
    directory = tempfile.mkdtemp(prefix="herald-fixture-")
    url = None
    if store == "postgres":
        from test_cluster import new_database
        url = new_database()
    server = Server(directory, url)
    try:
        output = server.cli("project", "create", PROJECT, "--public-url", server.url, "--key-dir", directory)
        fields = printed_fields(output)
        project = {"id": PROJECT, "api_key": fields["api key"], "key_file": fields["key file"]}
        server.projects["compat-semantics"] = project
        server.start()
        app = herald_sdk.initialize(server.url, project["key_file"], name=f"fixture-{version}-{store}")
        identities = [f"device-{index}.json" for index in range(3)]
        devices = [Device(server, os.path.join(directory, name)) for name in identities]
        tokens = [device.token for device in devices]
        assert messaging.subscribe_to_topic(tokens, "fixture", app=app).success_count == 3
        for device in devices:
            device.stop()
        owed = {token: [] for token in tokens}
        ttl = messaging.AndroidConfig(ttl=2_419_200)
        for round in range(4):
            for token in tokens:
                name = messaging.send(
                    messaging.Message(token=token, data={"round": str(round)}, android=ttl), app=app)
                owed[token].append(name.rsplit("/", 1)[1])
        name = messaging.send(messaging.Message(topic="fixture", data={"topic": "1"}, android=ttl), app=app)
        for token in tokens:
            owed[token].append(name.rsplit("/", 1)[1])
        time.sleep(2)  # the topic's fanout reaches every queue
        server.stop()
        manifest = {
            "version": version, "store": store, "project": PROJECT, "api_key": project["api_key"],
            "key_file": os.path.basename(project["key_file"]), "written_at": int(time.time()),
            "devices": [{"identity": name, "token": token, "owed": owed[token]}
                        for name, token in zip(identities, tokens)],
        }
        with open(os.path.join(directory, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        if url:
            with open(os.path.join(directory, "store.sql"), "w") as f:
                subprocess.run(["pg_dump", "--no-owner", "--no-privileges", url], stdout=f, check=True)
        os.remove(os.path.join(directory, "serve.log"))
        path = fixture_path(version, store)
        with tarfile.open(path, "w:gz") as archive:
            for name in sorted(os.listdir(directory)):
                archive.add(os.path.join(directory, name), arcname=name)
        print(f"{path}: {os.path.getsize(path)} bytes")
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    write(sys.argv[1], "sqlite")
    if os.environ.get("HERALD_TEST_POSTGRES"):
        write(sys.argv[1], "postgres")
