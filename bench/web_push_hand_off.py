"""Hand-offs to a browser's push service: Herald's CPU for each of N messages, one to each of N
web registrations whose endpoints are at one push service, all on one HTTP/2 connection, and
the VAPID JWTs the run made. A stand-in push service on loopback (HTTP/2 over TLS) answers 201
to every push. The messages are sent while it is down, so the CPU of the sends (each message
encrypted for its browser: RFC 8291) and of the hand-offs (signed with the project's key: RFC
8292) is read apart, from /proc of the server.

Usage: HERALD_BIN=<herald> .venv/bin/python bench/web_push_hand_off.py [MESSAGES, default 10000]
WEB_PUSH_BENCH_PERF=<file> records a perf profile of the server over the sends and hand-offs."""
import base64
import concurrent.futures
import json
import os
import re
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "compat"))

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

from apns_fanout import cpu_seconds, post  # noqa: E402
from conftest import HeraldServer  # noqa: E402
from push_service import PushService  # noqa: E402

APP = "web-push-bench"


def counter(metrics, name, label=""):
    return sum(float(m.group(1)) for m in re.finditer(rf"^{name}(?:\{{[^}}]*{label}[^}}]*\}})? ([0-9.e+]+)$",
                                                      metrics, re.MULTILINE))


def request(url, body, headers):
    call = urllib.request.Request(url, data=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(call, timeout=60) as response:
        return json.load(response)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    service = PushService()
    service.come_up()
    service.go_down()
    herald = HeraldServer()
    try:
        project = herald.create_project(APP)
        key = herald.cli("project", "web-push-key", APP).strip()
        for setting in ("device-per-minute=100000000", "device-per-hour=100000000",
                        "downstream-per-minute=100000000"):
            herald.cli("project", "set", APP, setting)
        herald.start("--web-push-service", "127.0.0.1", "--allow-webhook-host", "127.0.0.1",
                     "--registrations-per-minute", "10000000", "--outbound-ca", service.ca_file)
        # One installation registering every browser, as many tabs of one site would.
        api = {"x-goog-api-key": project["api_key"]}
        installation = request(f"{herald.url}/v1/projects/{APP}/installations",
                               {"appId": f"1:{project['number']}:web:bench", "authVersion": "FIS_v2"}, api)
        auth = {**api, "x-goog-firebase-installations-auth": installation["authToken"]["token"]}
        browser = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        keys = {"p256dh": base64.urlsafe_b64encode(browser).rstrip(b"=").decode(),
                "auth": base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode(), "applicationPubKey": key}

        def register(i):
            web = {"endpoint": f"https://127.0.0.1:{service.port}/push/{i}", **keys}
            return request(f"{herald.url}/v1/projects/{APP}/registrations", {"web": web}, auth)["token"]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            tokens = list(pool.map(register, range(count)))

        profile = None
        if os.environ.get("WEB_PUSH_BENCH_PERF"):
            import subprocess
            profile = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(herald.process.pid),
                                        "-o", os.environ["WEB_PUSH_BENCH_PERF"]], stderr=subprocess.DEVNULL)
        time.sleep(1)
        cpu_start = cpu_seconds(herald.process.pid)

        # One message to each registration, a thousand a legacy send, each encrypted for its browser.
        def send(start):
            answer = post(f"{herald.url}/fcm/send", {"registration_ids": tokens[start:start + 1000],
                                                     "notification": {"title": "Bench", "body": "a hand-off"},
                                                     "data": {"n": "1"}}, project["server_key"])
            assert answer["success"] == len(tokens[start:start + 1000]), answer
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(send, range(0, count, 1000)))
        time.sleep(2)
        cpu_sent = cpu_seconds(herald.process.pid)
        service.come_up()
        started = time.time()
        while counter(herald.metrics(), "herald_web_push_hand_offs_total", 'outcome="delivered"') < count:
            time.sleep(0.2)
            if time.time() - started > 600:
                raise SystemExit("not all handed off in 10 minutes")
        elapsed = time.time() - started
        cpu_end = cpu_seconds(herald.process.pid)
        if profile:
            import signal
            profile.send_signal(signal.SIGINT)
            profile.wait(timeout=60)
        metrics = herald.metrics()
        sends, handoffs = cpu_sent - cpu_start, cpu_end - cpu_sent
        print(f"| messages handed off | {count:,} |")
        print(f"| all handed off in | {elapsed:.1f} s after the push service came back (backoff included) |")
        print(f"| Herald CPU: sends (each message encrypted) | {sends:.2f} s, {sends / count * 1e6:.1f} µs a message |")
        print(f"| Herald CPU: hand-offs (signed, one HTTP/2 connection) | {handoffs:.2f} s, "
              f"{handoffs / count * 1e6:.1f} µs a message |")
        print(f"| Herald CPU: both | {(sends + handoffs) / count * 1e6:.1f} µs a message |")
        print(f"| VAPID JWTs made | {counter(metrics, 'herald_web_push_signatures_total'):.0f} "
              f"({len(service.authorizations)} seen by the service) |")
        print(f"| connections to the push service | {service.connections} |")
        print(f"| pushes the service answered | {service.pushes:,} |")
    finally:
        herald.stop()


if __name__ == "__main__":
    main()
