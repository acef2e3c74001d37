"""The crash test: load on a `herald serve` (token sends to online and offline app
instances, topic sends to all of them) while the server is killed with SIGKILL at random
moments and started again; at the end every message that received a name must have
reached each of its app instances exactly once (none of them expires: TTLs are a day).

Used by compat/test_crash.py (a short run in the test command) and scripts/crash-test
(longer runs, with a report). Rules: L4 (store and forward), T3 (fanouts resume)."""
import json
import os
import queue
import random
import shutil
import subprocess
import tempfile
import threading
import time
import types

from firebase_admin import exceptions, messaging

import herald_sdk
from conftest import HERALD, ServeProcess, free_port, printed_fields, wait_until_healthy
from test_semantics import Device

PROJECT = "crash-test"


class Server(ServeProcess):
    """A herald serve that can be killed and started again on the same ports and data."""

    def __init__(self, directory, store=None):
        self.directory = directory
        self.data_dir = os.path.join(directory, "data")
        self.store_flags = ["--store", store] if store else []
        self.port = free_port()
        self.gateway_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ca_file = os.path.join(self.data_dir, "tls", "ca.pem")
        self.process = None
        self.projects = {}

    def cli(self, *args):
        return subprocess.run(
            [HERALD, *args, "--data-dir", self.data_dir, *self.store_flags],
            capture_output=True, text=True, timeout=60, check=True).stdout

    def start(self):
        log = open(os.path.join(self.directory, "serve.log"), "ab")
        self.process = subprocess.Popen(
            [HERALD, "serve", "--data-dir", self.data_dir, *self.store_flags, "--http-port", str(self.port),
             "--gateway-port", str(self.gateway_port)],
            stdout=log, stderr=subprocess.STDOUT)
        wait_until_healthy(self.url)



def collect(device, into):
    """Moves the device's printed messages into `into` (message ids, in arrival order)."""
    while True:
        try:
            line = device.lines.get_nowait()
        except queue.Empty:
            return
        if line.startswith("{"):
            into.append(json.loads(line)["id"])


def run(store=None, online=4, offline=4, kills=3, pause=(1.5, 3.0), topic_every=10, senders=1,
        log=lambda text: None):
    """Runs the crash test; answers a report: what was accepted, delivered, missing and
    delivered twice, per kind of target. `senders` threads send at once, so that the
    server's writes of several sends share transactions when it is killed."""
    directory = tempfile.mkdtemp(prefix="herald-crash-")
    server = Server(directory, store)
    devices = []
    try:
        output = server.cli("project", "create", PROJECT, "--public-url", server.url, "--key-dir", directory)
        fields = printed_fields(output)
        server.projects[PROJECT] = {"id": PROJECT, "api_key": fields["api key"], "key_file": fields["key file"]}
        # The semantics Device helper registers apps of this project.
        server.projects["compat-semantics"] = server.projects[PROJECT]
        # Offline app instances keep everything they are sent (more than the default 100, D1).
        server.cli(
            "project", "set", PROJECT, "device-per-minute=100000", "device-per-hour=100000", "max-pending=100000")
        server.start()
        app = herald_sdk.initialize(server.url, server.projects[PROJECT]["key_file"], name=f"crash-{id(server)}")

        identities = [os.path.join(directory, f"device-{i}.json") for i in range(online + offline)]
        for identity in identities:
            devices.append(Device(server, identity))
        tokens = [device.token for device in devices]
        assert messaging.subscribe_to_topic(tokens, "crash", app=app).success_count == len(tokens)
        # The offline ones stop now and connect again only at the end.
        for device in devices[online:]:
            device.stop()
        received = {token: [] for token in tokens}
        owed = {token: [] for token in tokens}
        accepted = {"token": 0, "topic": 0}
        refused = [0]
        stop = threading.Event()
        counting = threading.Lock()

        def send_load(sender):
            count = 0
            while not stop.is_set():
                count += 1
                ttl = messaging.AndroidConfig(ttl=86_400)
                data = {"n": f"{sender}-{count}"}
                try:
                    if count % topic_every == 0:
                        name = messaging.send(messaging.Message(topic="crash", data=data, android=ttl), app=app)
                        with counting:
                            for token in tokens:
                                owed[token].append(name.rsplit("/", 1)[1])
                            accepted["topic"] += 1
                    else:
                        token = random.choice(tokens)
                        name = messaging.send(messaging.Message(token=token, data=data, android=ttl), app=app)
                        with counting:
                            owed[token].append(name.rsplit("/", 1)[1])
                            accepted["token"] += 1
                except (exceptions.FirebaseError, OSError, ValueError):
                    # No name: not accepted (the server was down or went down mid-request).
                    with counting:
                        refused[0] += 1
                    time.sleep(0.05)

        threads = [threading.Thread(target=send_load, args=(index,)) for index in range(senders)]
        for thread in threads:
            thread.start()
        for kill in range(kills):
            time.sleep(random.uniform(*pause))
            server.kill()
            log(f"killed the server ({kill + 1}/{kills}), {sum(accepted.values())} accepted so far")
            time.sleep(random.uniform(0.2, 1.0))
            server.start()
        time.sleep(random.uniform(*pause))
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        # The offline app instances come back; everyone gets time to drain.
        for index in range(online, online + offline):
            devices[index] = Device(server, identities[index])
        deadline = time.time() + 60
        while time.time() < deadline:
            for device, token in zip(devices, tokens):
                collect(device, received[token])
            if all(set(owed[t]) <= set(received[t]) for t in tokens):
                break
            time.sleep(0.2)
        time.sleep(1)  # anything arriving twice arrives now
        for device, token in zip(devices, tokens):
            collect(device, received[token])
        report = types.SimpleNamespace(
            kills=kills, accepted_token_sends=accepted["token"], accepted_topic_sends=accepted["topic"],
            refused_sends=refused[0],
            owed=sum(len(ids) for ids in owed.values()),
            delivered=sum(len(set(received[t]) & set(owed[t])) for t in tokens),
            missing=sum(len(set(owed[t]) - set(received[t])) for t in tokens),
            duplicates=sum(len(ids) - len(set(ids)) for ids in received.values()),
            unowed=sum(len(set(received[t]) - set(owed[t])) for t in tokens),
            missing_by_device=[
                (index < online, len(set(owed[t]) - set(received[t])), len(owed[t]), device.process.poll())
                for index, (device, t) in enumerate(zip(devices, tokens))
            ],
        )
        return report
    finally:
        for device in devices:
            if device.process.poll() is None:
                device.process.kill()
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def main():
    import argparse

    parser = argparse.ArgumentParser(description="Kill herald serve under load and count what was lost.")
    parser.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--online", type=int, default=8)
    parser.add_argument("--offline", type=int, default=8)
    parser.add_argument("--senders", type=int, default=4, help="threads sending at once")
    arguments = parser.parse_args()
    store = None
    if arguments.store == "postgres":
        from test_cluster import new_database
        store = new_database()
    started = time.time()
    report = run(
        store=store, online=arguments.online, offline=arguments.offline, kills=arguments.kills,
        senders=arguments.senders, log=lambda text: print(f"  {text}", flush=True))
    print(f"store {arguments.store}: {report.kills} kills in {time.time() - started:.0f} s")
    for field in ("accepted_token_sends", "accepted_topic_sends", "refused_sends", "owed", "delivered", "missing",
                  "duplicates", "unowed"):
        print(f"  {field.replace('_', ' ')}: {getattr(report, field)}")
    if report.missing or report.duplicates:
        print(f"  by app instance (online, missing, owed, exit): {report.missing_by_device}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
