"""Backups of the embedded store: `herald backup` while messages are being sent, `herald
restore` with the server stopped, and after the restart every message accepted before the
backup began is delivered (and none accepted after it ended, which the backup cannot hold)."""
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time

from firebase_admin import messaging

import herald_sdk
from conftest import HERALD, printed_fields
from crash import Server, collect
from test_semantics import Device

PROJECT = "backup-test"


def test_a_backup_taken_while_sending_restores_everything_accepted_before_it():
    directory = tempfile.mkdtemp(prefix="herald-backup-")
    server = Server(directory)
    devices = []
    try:
        output = server.cli("project", "create", PROJECT, "--public-url", server.url, "--key-dir", directory)
        fields = printed_fields(output)
        server.projects["compat-semantics"] = {"id": PROJECT, "api_key": fields["api key"]}
        server.cli("project", "set", PROJECT, "device-per-minute=100000", "device-per-hour=100000",
                   "max-pending=100000")
        server.start()
        app = herald_sdk.initialize(server.url, fields["key file"], name=f"backup-{id(server)}")
        identities = [os.path.join(directory, f"device-{i}.json") for i in range(3)]
        tokens = []
        for identity in identities:
            device = Device(server, identity)
            tokens.append(device.token)
            device.stop()
        accepted = []  # (token, message id, when the send returned)
        stop = threading.Event()

        def send():
            count = 0
            while not stop.is_set():
                count += 1
                token = random.choice(tokens)
                name = messaging.send(messaging.Message(token=token, data={"n": str(count)}), app=app)
                accepted.append((token, name.rsplit("/", 1)[1], time.time()))

        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(1.5)
        backup = os.path.join(directory, "backup.sqlite")
        began = time.time()
        result = subprocess.run([HERALD, "backup", "--to", backup, "--data-dir", server.data_dir],
                                capture_output=True, text=True, timeout=60)
        ended = time.time()
        assert result.returncode == 0, result.stderr
        time.sleep(1)
        stop.set()
        sender.join(timeout=30)
        before = [(token, name) for token, name, when in accepted if when < began]
        after = {name for _, name, when in accepted if when > ended}
        assert len(before) >= 20 and len(after) >= 10, (len(before), len(after))
        print(f"accepted before the backup {len(before)}, during it {len(accepted) - len(before) - len(after)}, "
              f"after it {len(after)}; backup took {ended - began:.2f} s")

        refused = subprocess.run([HERALD, "restore", "--from", backup, "--data-dir", server.data_dir],
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode != 0 and "herald serve is running" in refused.stderr
        server.stop()
        result = subprocess.run([HERALD, "restore", "--from", backup, "--data-dir", server.data_dir],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        server.start()

        devices = [Device(server, identity) for identity in identities]
        received = {token: [] for token in tokens}
        owed = {token: {name for t, name in before if t == token} for token in tokens}
        deadline = time.time() + 30
        while time.time() < deadline and not all(owed[t] <= set(received[t]) for t in tokens):
            for device, token in zip(devices, tokens):
                collect(device, received[token])
            time.sleep(0.2)
        time.sleep(1)
        for device, token in zip(devices, tokens):
            collect(device, received[token])
        for token in tokens:
            assert owed[token] <= set(received[token]), "everything accepted before the backup"
            assert len(received[token]) == len(set(received[token])), "each once"
            assert not set(received[token]) & after, "nothing accepted after the backup ended"
    finally:
        for device in devices:
            if device.process.poll() is None:
                device.process.kill()
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
