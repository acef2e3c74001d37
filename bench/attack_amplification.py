"""What each amplification attempt of the hostile-client findings leaves behind: the store's
used bytes (SQLite pages in use, write-ahead log included), its rows, the log's size and the
server's memory and CPU, before and after each attempt, against one fresh server. Prints a
Markdown table for RELIABILITY.md.

Usage: HERALD_BIN=<herald> .venv/bin/python bench/attack_amplification.py"""
import json
import os
import sqlite3
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "compat"))

from conftest import HeraldDevice, HeraldServer  # noqa: E402
from test_attacks import checked_in_device, gateway_socket, receipt, request  # noqa: E402
from test_attacks_second_round import rows  # noqa: E402
from test_real_clients import Receiver  # noqa: E402

PROJECT = "amplified"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def store_bytes(server):
    database = sqlite3.connect(f"file:{os.path.join(server.data_dir, 'herald.sqlite')}?mode=ro", uri=True)
    try:
        pages, free, size = (database.execute(f"PRAGMA {name}").fetchone()[0]
                             for name in ("page_count", "freelist_count", "page_size"))
        return (pages - free) * size
    finally:
        database.close()


def log_bytes(server):
    return os.path.getsize(os.path.join(server.directory, "serve.log"))


def process(server):
    fields = open(f"/proc/{server.process.pid}/stat").read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss = next(int(line.split()[1]) for line in open(f"/proc/{server.process.pid}/status")
               if line.startswith("VmRSS:")) / 1024
    return cpu, rss


def installations(server):
    project = server.projects[PROJECT]
    headers = {"x-goog-api-key": project["api_key"], "Content-Type": "application/json"}
    statuses = [request(f"{server.url}/v1/projects/{PROJECT}/installations",
                        {"appId": "1:1:android:" + "a" * 1_000_000, "authVersion": "FIS_v2"}, headers)[0]
                for _ in range(20)]
    return f"20 installations with a 1 MB appId: answered {sorted(set(statuses))}", "installations"


def upstream(server, directory):
    device = HeraldDevice(server, PROJECT, os.path.join(directory, "upstream.json"), app_id="com.example.up")
    answers = set()
    try:
        for index in range(200):
            device.command(f"upstream {index:05d}{'i' * 60_000} ttl:2419200 k=v")
            answers.add(device.line(30).split()[0])
    finally:
        device.stop()
    return f"200 upstream messages with a 60 KB id, 28-day TTL: answered {sorted(answers)}", "upstream_messages"


def register3(server):
    android_id, security_token = checked_in_device(server)
    form = urllib.parse.urlencode({"app": "com.example.repeat", "sender": server.projects[PROJECT]["number"],
                                   "device": android_id}).encode()
    auth = {"Authorization": f"AidLogin {android_id}:{security_token}", **FORM}
    statuses = [request(f"{server.url}/c2dm/register3", form, auth)[0] for _ in range(1_000)]
    return f"1,000 identical register3 requests of one device: answered {sorted(set(statuses))}", "registrations"


def recheckins(server):
    from fcm_receiver import http_client
    from fcm_receiver.fcm_client import FCMClient
    android_id, security_token = checked_in_device(server)
    client = FCMClient()
    client.android_id, client.security_token = android_id, security_token
    body = http_client.marshal_android_checkin_request(client._build_checkin_request())
    statuses = [request(f"{server.url}/checkin", body, {"Content-Type": "application/x-protobuf"})[0]
                for _ in range(1_000)]
    return f"1,000 check-ins again of one device: answered {sorted(set(statuses))}", "devices"


def receipts(server):
    attacker = Receiver(server, server.projects[PROJECT])
    attacker.client.register()
    sock = gateway_socket(server)
    sock.sendall(attacker.client._build_login_request_packet())
    sock.recv(1)
    sock.sendall(b"".join(receipt(f"0:{index}%unknown") for index in range(100_000)))
    time.sleep(8)
    sock.close()
    return "100,000 `opened` receipts for unknown message ids", "delivery_stats"


def main():
    herald = HeraldServer()
    herald.projects = {PROJECT: herald.create_project(PROJECT)}
    # The per-address and per-device request limits lifted: what one request stores is measured.
    herald.start("--checkins-per-minute", "0", "--registrations-per-minute", "0",
                 "--device-registrations-per-minute", "0")
    table = ["| attempt | store used before → after | rows before → after | log | server CPU | RSS before → after |",
             "|---|---|---|---|---|---|"]
    try:
        for attempt in (installations, lambda s: upstream(s, herald.directory), register3, recheckins, receipts):
            used, log = store_bytes(herald), log_bytes(herald)
            cpu, rss = process(herald)
            table_rows = {name: rows(herald, name)
                          for name in ("installations", "upstream_messages", "registrations", "devices",
                                       "delivery_stats")}
            what, table_name = attempt(herald)
            time.sleep(1.5)
            after_cpu, after_rss = process(herald)
            table.append(
                f"| {what} | {used / 1e6:.2f} → {store_bytes(herald) / 1e6:.2f} MB | {table_name} "
                f"{table_rows[table_name]} → {rows(herald, table_name)} | +{(log_bytes(herald) - log) / 1e3:.1f} kB "
                f"| {after_cpu - cpu:.2f} s | {rss:.0f} → {after_rss:.0f} MB |")
    finally:
        herald.stop()
    print("\n".join(table))


if __name__ == "__main__":
    main()
