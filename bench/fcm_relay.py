"""Hand-offs to FCM: Herald's CPU a hand-off over N messages, one to each of N Google tokens,
all on one HTTP/2 connection, and the access-token requests the run took. A second Herald plays Google.
The messages are sent while Google is down (so their acceptance is not counted), then Google
comes back and Herald's CPU (from /proc of the server) is read over the hand-offs alone.

Usage: HERALD_BIN=<herald> .venv/bin/python bench/fcm_relay.py [MESSAGES, default 10000]
FCM_BENCH_PERF=<file> records a perf profile of the server over the hand-offs."""
import concurrent.futures
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "compat"))

from apns_fanout import cpu_seconds, post  # noqa: E402
from conftest import HeraldServer, free_port  # noqa: E402

APP, GOOGLE = "relay-bench", "google-bench"


def counter(metrics, name, label):
    return sum(float(m.group(1)) for m in re.finditer(rf"^{name}\{{[^}}]*{label}[^}}]*\}} ([0-9.e+]+)$", metrics,
                                                      re.MULTILINE))


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    google, herald = HeraldServer(), HeraldServer()
    try:
        google.projects = {GOOGLE: google.create_project(GOOGLE)}
        for setting in ("device-per-minute=100000000", "device-per-hour=100000000", "max-pending=100",
                        "downstream-per-minute=100000000"):
            google.cli("project", "set", GOOGLE, setting)
        from apns_simulator import make_p8
        key_file = os.path.join(google.directory, "apns.p8")
        with open(key_file, "w") as f:
            f.write(make_p8())
        google.cli("project", "apns-key", GOOGLE, "--key-file", key_file, "--key-id", "KEY1234567", "--team-id",
                   "TEAM123456", "--bundle-id", "com.example.bench")
        port = free_port()
        # APNs unreachable: Google's Herald keeps what it accepted.
        flags = ("--drop-in", "--drop-in-port", str(port), "--drop-in-hostname", "localhost", "--xmpp-port",
                 str(free_port()), "--apns-production-url", f"https://127.0.0.1:{free_port()}",
                 "--imports-per-minute", "1000000")
        google.start(*flags)
        # Google's app instances: imported APNs tokens (Google's Herald holds their messages
        # for APNs, so each hand-off is answered as soon as it is stored).
        def import_chunk(start):
            apns = [os.urandom(32).hex() for _ in range(min(100, count - start))]
            answer = post(f"{google.url}/iid/v1:batchImport",
                          {"application": "com.example.bench", "apns_tokens": apns}, google.projects[GOOGLE]["server_key"])
            assert all("registration_token" in r for r in answer["results"]), answer["results"][:2]
            return [result["registration_token"] for result in answer["results"]]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            tokens = [t for part in pool.map(import_chunk, range(0, count, 100)) for t in part]
        google.process.send_signal(signal.SIGTERM)
        google.process.wait(timeout=15)

        project = herald.create_project(APP)
        herald.cli("project", "fcm-relay", APP, "--service-account", google.projects[GOOGLE]["key_file"])
        for setting in ("device-per-minute=100000000", "device-per-hour=100000000", "max-pending=100000",
                        "downstream-per-minute=100000000"):
            herald.cli("project", "set", APP, setting)
        herald.start("--fcm-url", f"https://localhost:{port}",
                     "--outbound-ca", os.path.join(google.data_dir, "tls", "drop-in-ca.pem"))

        # One message to each token, a thousand tokens a legacy send, each token its own message.
        def send(start):
            answer = post(f"{herald.url}/fcm/send", {"registration_ids": tokens[start:start + 1000], "data": {"n": "1"}},
                          project["server_key"])
            assert answer["success"] == len(tokens[start:start + 1000]), answer
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(send, range(0, count, 1000)))
        time.sleep(2)
        cpu_before = cpu_seconds(herald.process.pid)
        profile = None
        if os.environ.get("FCM_BENCH_PERF"):
            # For a profile of the hand-offs alone: perf record of the server until they are done.
            import subprocess
            profile = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(herald.process.pid),
                                        "-o", os.environ["FCM_BENCH_PERF"]], stderr=subprocess.DEVNULL)
        google.start(*flags)
        started = time.time()
        while counter(herald.metrics(), "herald_fcm_hand_offs_total", 'outcome="delivered"') < count:
            time.sleep(0.2)
            if time.time() - started > 600:
                raise SystemExit("not all handed off in 10 minutes")
        elapsed = time.time() - started
        cpu = cpu_seconds(herald.process.pid) - cpu_before
        if profile:
            profile.send_signal(signal.SIGINT)
            profile.wait(timeout=60)
        tokens = counter(google.metrics(), "herald_http_requests_total", 'route="/token"')
        metrics = herald.metrics()
        answers = {outcome: counter(metrics, "herald_fcm_hand_offs_total", f'outcome="{outcome}"')
                   for outcome in ("delivered", "retry", "renew_token", "refused", "unregistered")}
        print(f"| messages handed off | {count:,} |")
        print(f"| all handed off in | {elapsed:.1f} s after Google came back (backoff included) |")
        print(f"| Herald CPU | {cpu:.2f} s, {cpu / count * 1e6:.1f} µs a hand-off |")
        print(f"| access-token requests | {tokens:.0f} |")
        print(f"| answers | {', '.join(f'{k} {v:.0f}' for k, v in answers.items())} |")
    finally:
        herald.stop()
        google.stop()


if __name__ == "__main__":
    main()
