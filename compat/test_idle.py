"""What a node costs with nothing to do: its background workers wait for the writes that
create their work instead of asking the store a few times a second, so an idle node makes at
most one store call a second (`herald_store_calls_total`), open event streams add none, and
work that a write creates still starts at once."""
import os
import shutil
import socket
import time
import urllib.request

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import counter, serving
from test_cluster import POSTGRES, Node, create_projects, new_cluster

PROJECTS = ["idle-a", "idle-b", "idle-c", "idle-d", "idle-e"]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def metrics(server):
    """The metrics of a node that serves them on loopback without a token, or with the suite's."""
    if hasattr(server, "metrics"):
        return server.metrics()
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as response:
        return response.read().decode()


def rate(herald, seconds):
    """Store calls and CPU milliseconds a second over `seconds` of the server's life."""
    calls, cpu = counter(metrics(herald), "herald_store_calls_total"), cpu_seconds(herald.process.pid)
    time.sleep(seconds)
    calls_after, cpu_after = counter(metrics(herald), "herald_store_calls_total"), cpu_seconds(herald.process.pid)
    # The metrics read itself is no store call.
    return (calls_after - calls) / seconds, (cpu_after - cpu) * 1000 / seconds


def open_stream(herald, project, token):
    sock = socket.create_connection(("127.0.0.1", herald.port), timeout=10)
    path = f"/v1/projects/{project}/events:stream"
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.split(b"\r\n", 1)[0].endswith(b"200 OK"), head
    return sock, head.split(b"\r\n\r\n", 1)[1]


def read_until(sock, seen, needle, seconds):
    deadline = time.time() + seconds
    sock.settimeout(0.2)
    while needle not in seen:
        assert time.time() < deadline, f"{needle!r} did not come within {seconds} s"
        try:
            seen += sock.recv(65536)
        except socket.timeout:
            pass
    return seen


def test_an_idle_node_makes_at_most_one_store_call_a_second_and_open_streams_add_none():
    with serving(PROJECTS) as herald:
        apps = {name: herald_sdk.initialize(herald.url, herald.projects[name]["key_file"], name=f"{name}-{time.time()}")
                for name in PROJECTS}
        tokens = {name: app.credential.get_access_token().access_token for name, app in apps.items()}
        time.sleep(2)  # the start's own work
        idle, idle_cpu = rate(herald, 20)
        first, seen = open_stream(herald, PROJECTS[0], tokens[PROJECTS[0]])
        one, one_cpu = rate(herald, 20)
        # Eight a key: the most one key may hold.
        streams = [open_stream(herald, name, tokens[name])[0] for name in PROJECTS[1:] for _ in range(8)]
        many, many_cpu = rate(herald, 20)
        print(f"idle node: {idle:.2f} store calls/s, {idle_cpu:.1f} ms CPU/s; one event stream: {one:.2f}/s, "
              f"{one_cpu:.1f} ms/s; {len(streams) + 1} streams: {many:.2f}/s, {many_cpu:.1f} ms/s")
        assert idle <= 1.0
        assert one <= 1.0
        # The expiry sweep (eight calls every 30 s) falls in one window or another.
        assert many <= one + 0.45
        # Woken, not polling: an event reaches an open stream at once, not at the next look.
        sent = time.time()
        name = messaging.send(messaging.Message(topic="news"), app=apps[PROJECTS[0]])
        message_id = name.rsplit("/", 1)[1]
        read_until(first, seen, message_id.encode(), 5)
        waited = time.time() - sent
        print(f"an event reached an idle node's stream {waited * 1000:.0f} ms after its send")
        assert waited < 1.0
        for sock in streams + [first]:
            sock.close()


@pytest.mark.skipif(not POSTGRES, reason="no PostgreSQL: run through scripts/test (HERALD_TEST_POSTGRES)")
def test_on_postgresql_an_idle_node_beats_and_little_else_and_hears_another_nodes_events_at_once():
    """Two nodes on one database: the idle one makes its heartbeat (one statement a second) and
    little more, and an event stream open on it hears of a send accepted by the other through
    NOTIFY, once the 2 s a PostgreSQL transaction may take to commit its events have passed."""
    cluster = new_cluster()
    nodes = [Node(cluster, node_id) for node_id in ("idle-a", "idle-b")]
    try:
        create_projects(cluster, [PROJECTS[0]], nodes[0].url)
        for node in nodes:
            node.start("--metrics-without-token")
        app = herald_sdk.initialize(nodes[0].url, cluster.projects[PROJECTS[0]]["key_file"], name=f"pg-{time.time()}")
        token = app.credential.get_access_token().access_token
        stream, seen = open_stream(nodes[1], PROJECTS[0], token)
        time.sleep(2)
        idle, idle_cpu = rate(nodes[1], 20)
        print(f"idle PostgreSQL node with an event stream: {idle:.2f} store calls/s, {idle_cpu:.1f} ms CPU/s")
        # The heartbeat, the quota exchange every 5 s, one look in 10 s for each worker, the sweep.
        assert idle <= 2.5
        sent = time.time()
        message_id = messaging.send(messaging.Message(topic="news"), app=app).rsplit("/", 1)[1]
        read_until(stream, seen, message_id.encode(), 8)
        waited = time.time() - sent
        print(f"an event accepted by one node reached a stream on the other {waited * 1000:.0f} ms after its send")
        assert waited < 3.5
        stream.close()
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(cluster.directory, ignore_errors=True)
