"""A topic fanout to APNs-backed app instances through the APNs simulator: how many
hand-offs a second Herald makes, and Herald's CPU per hand-off (from /proc of the server,
the fanout's expansion and the store writes included), against one fresh release server.

Usage: HERALD_BIN=<herald> .venv/bin/python bench/apns_fanout.py [TOKENS]
APNS_BENCH_SENDING=<file> writes the server's pid to that file as the send goes (to profile it)."""
import concurrent.futures
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "compat"))

from apns_simulator import APNsSimulator, make_p8  # noqa: E402
from conftest import HeraldServer  # noqa: E402

PROJECT = "apns-bench"
BUNDLE = "com.example.bench"
TEAM, KEY_ID = "TEAM123456", "KEY1234567"
TOPIC = "everyone"


def post(url, body, server_key):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"key={server_key}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    simulator = APNsSimulator()
    pem = make_p8()
    simulator.set_keys({KEY_ID: (TEAM, pem)})
    tokens = [simulator.add_device(BUNDLE) for _ in range(count)]
    server = HeraldServer()
    try:
        project = server.create_project(PROJECT)
        key_file = os.path.join(server.directory, "key.p8")
        with open(key_file, "w") as f:
            f.write(pem)
        server.cli("project", "apns-key", PROJECT, "--key-file", key_file, "--key-id", KEY_ID, "--team-id", TEAM,
                   "--bundle-id", BUNDLE)
        server.cli("project", "set", PROJECT, "topic-ops-per-second=1000000")
        url = f"https://127.0.0.1:{simulator.port}"
        server.start("--apns-production-url", url, "--outbound-ca", simulator.ca_file)
        key = project["server_key"]
        started = time.time()

        def import_chunk(chunk):
            answer = post(f"{server.url}/iid/v1:batchImport",
                          {"application": BUNDLE, "apns_tokens": chunk}, key)
            return [result["registration_token"] for result in answer["results"]]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            registrations = [t for part in pool.map(import_chunk, [tokens[i:i + 100] for i in range(0, count, 100)])
                             for t in part]
        imported = time.time() - started

        def subscribe(chunk):
            post(f"{server.url}/iid/v1:batchAdd", {"to": f"/topics/{TOPIC}", "registration_tokens": chunk}, key)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(subscribe, [registrations[i:i + 1000] for i in range(0, count, 1000)]))
        time.sleep(1)
        cpu_before = cpu_seconds(server.process.pid)
        if os.environ.get("APNS_BENCH_SENDING"):
            # For a profiler: the file appears as the send goes, with the server's pid.
            with open(os.environ["APNS_BENCH_SENDING"], "w") as f:
                f.write(str(server.process.pid))
        sent_at = time.time()
        post(f"{server.url}/fcm/send", {"to": f"/topics/{TOPIC}", "notification": {"title": "All", "body": "of you"}},
             key)
        while len(simulator.received) < count:
            time.sleep(0.05)
            if time.time() - sent_at > 900:
                raise SystemExit(f"only {len(simulator.received)} of {count} arrived in 15 minutes")
        elapsed = time.time() - sent_at
        cpu = cpu_seconds(server.process.pid) - cpu_before
        refused = len(simulator.refused)
        print(f"| APNs tokens | {count:,} |")
        print(f"| imported in | {imported:.1f} s ({count / imported:,.0f} tokens/s) |")
        print(f"| all handed off in | {elapsed:.1f} s after the send |")
        print(f"| hand-offs a second | {count / elapsed:,.0f} |")
        print(f"| Herald CPU | {cpu:.2f} s, {cpu / count * 1e6:.1f} µs a hand-off |")
        print(f"| refused by the simulator | {refused} |")
    finally:
        server.stop()
        simulator.close()


if __name__ == "__main__":
    main()
