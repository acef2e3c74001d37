"""`herald bench` without --url starts a server of its own, measures, and cleans up:
small runs of each subcommand, checked for complete results (every message received)."""
import json
import os
import subprocess
import tempfile

from conftest import HERALD


def bench(*arguments):
    result = subprocess.run([HERALD, "bench", *arguments, "--json"], capture_output=True, text=True, timeout=300,
                            cwd=tempfile.gettempdir())
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def bench_directories():
    return {name for name in os.listdir(tempfile.gettempdir()) if name.startswith("herald-bench-")}


def test_drain_delivers_every_stored_message_on_connect():
    before = bench_directories()
    report = bench("drain", "--messages", "150", "--plaintext")
    assert report["failed_sends"] == 0 and report["received"] == 150
    assert report["drain_seconds"] > 0 and report["server_cpu_seconds"] is not None
    assert bench_directories() == before  # the server's data directory is gone


def test_fanout_reaches_every_connected_subscriber_over_tls():
    report = bench("fanout", "--subscribers", "120", "--connected", "40", "--payload-bytes", "64")
    assert report["connected_received"] == 40
    assert report["overall_deliveries_per_second"] > 0 and report["peak_rss_kb"] > 0


def test_upstream_messages_from_every_device_reach_the_app_servers_once():
    report = bench("upstream", "--devices", "40", "--messages", "5", "--app-servers", "2")
    assert report["sent"] == 200 and report["received"] == 200 and report["repeated"] == 0
    assert report["per_second"] > 0 and report["server_cpu_us_per_message"] > 0


def test_web_push_messages_reach_every_subscribed_device():
    report = bench("webpush", "--devices", "30", "--messages", "150", "--senders", "3")
    assert report["sent"] == 150 and report["received"] == 150
    assert report["per_second"] > 0 and report["server_cpu_us_per_push"] > 0 and report["latency_p99_ms"] > 0


def test_web_push_and_connections_over_mozillas_push_protocol():
    report = bench("webpush", "--mozilla-push", "--devices", "30", "--messages", "150", "--senders", "3")
    assert report["sent"] == 150 and report["received"] == 150 and report["server_cpu_us_per_push"] > 0
    connect = bench("connect", "--mozilla-push", "--connections", "100", "--plaintext")
    assert connect["connections"] == 100 and connect["failures"] == 0


def test_fanout_to_a_small_topic_on_a_busy_node_reaches_only_its_subscribers():
    report = bench("fanout", "--subscribers", "30", "--connected", "30", "--others", "60", "--plaintext")
    assert report["connected_received"] == 30
    assert report["other_connected"] == 60 and report["other_received"] == 0


def test_e2e_and_connect_and_send():
    e2e = bench("e2e", "--rate", "100", "--seconds", "1", "--devices", "10", "--plaintext")
    assert e2e["sent"] == 100 and e2e["received"] == 100 and e2e["failed_sends"] == 0
    connect = bench("connect", "--connections", "100", "--plaintext")
    assert connect["connections"] == 100 and connect["failures"] == 0
    send = bench("send", "--seconds", "1", "--connections", "4")
    assert send["requests"] > 0 and send["failures"] == 0
