"""Webhooks seen from a real endpoint (SEMANTICS E5): Python's http.server checks every
signature as docs/EVENTS.md documents; events arrive in order, survive the endpoint being
down and Herald being killed, and forged or replayed requests fail the check."""
import json
import os
import subprocess
import time
import urllib.parse
import urllib.request

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HERALD, HeraldDevice, HeraldServer, free_port, printed_fields
from webhook_receiver import Receiver, verify

PROJECT = "compat-hooks"


@pytest.fixture(scope="module")
def server():
    herald = HeraldServer()
    herald.projects = {PROJECT: herald.create_project(PROJECT)}
    herald.cli("project", "set", PROJECT, "per-device-events=true")
    herald.start("--allow-webhook-host", "127.0.0.1")
    yield herald
    herald.stop()


@pytest.fixture
def app(server):
    return herald_sdk.initialize(server.url, server.projects[PROJECT]["key_file"], name=f"hooks-{time.time()}")


def add_webhook(server, receiver, *flags):
    # The server allows 127.0.0.1; the command checks the target as the server will.
    output = server.cli("project", "webhook", "add", PROJECT, "--url", receiver.url,
                        "--allow-webhook-host", "127.0.0.1", *flags)
    fields = printed_fields(output)
    receiver.secret = fields["signing secret"]
    return fields["webhook"]


def remove_webhook(server, webhook):
    server.cli("project", "webhook", "remove", PROJECT, webhook)


def events_of(server, app, message_id, project=PROJECT):
    """A message's events as the status API of `server` (anything with a `url`) lists them."""
    token = app.credential.get_access_token().access_token
    request = urllib.request.Request(
        f"{server.url}/v1/projects/{project}/messages/{urllib.parse.quote(message_id, safe='')}/events?pageSize=1000",
        headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["events"]


def kept_events(server, app, message_id, types, seconds=15, project=PROJECT):
    """The message's events once those of `types` are all written."""
    deadline = time.time() + seconds
    while True:
        events = events_of(server, app, message_id, project)
        if set(types) <= {event["type"] for event in events} or time.time() > deadline:
            return events
        time.sleep(0.1)


def send(app, token, **fields):
    return messaging.send(messaging.Message(token=token, **fields), app=app).rsplit("/", 1)[1]


def in_log_order(server, taken):
    """Whether events came in the order the project's log holds them (`herald events
    export` writes it oldest first): an event's id is opaque, and says nothing of order."""
    exported = server.cli("events", "export", "--project", PROJECT, "--since", "0")
    order = {json.loads(line)["id"]: index for index, line in enumerate(exported.splitlines())}
    return [order[event["id"]] for event in taken] == sorted(order[event["id"]] for event in taken)


def test_E5_a_send_its_delivery_and_its_receipts_arrive_signed_and_in_order(server, app, tmp_path):
    receiver = Receiver(free_port())
    webhook = add_webhook(server, receiver)
    device = HeraldDevice(server, PROJECT, tmp_path / "order.json", app_id="com.example.hooks")
    try:
        device.command("background")
        sent = send(app, device.token, notification=messaging.Notification(title="Hi", body="there"))
        assert device.line().startswith("tray: ")
        device.command(f"open {sent}")
        kept = kept_events(server, app, sent, ["accepted", "delivered", "impression", "opened"])
        assert {event["type"] for event in kept} == {"accepted", "delivered", "impression", "opened"}
        taken = [event for event in receiver.wait_for([event["id"] for event in kept]) if event["message_id"] == sent]
        assert taken == kept  # the same events, the same ids, in the log's order
        assert taken[0]["type"] == "accepted"
        assert in_log_order(server, receiver.taken())
        assert receiver.refused == 0
        headers, _ = receiver.requests[-1]
        assert headers["Herald-Webhook-Id"] == webhook
    finally:
        device.stop()
        remove_webhook(server, webhook)
        receiver.down()


def test_E5_events_sent_while_the_endpoint_was_down_for_30_seconds_all_arrive(server, app, tmp_path):
    receiver = Receiver(free_port())
    webhook = add_webhook(server, receiver, "--events", "accepted,delivered")
    device = HeraldDevice(server, PROJECT, tmp_path / "down.json", app_id="com.example.hooks")
    try:
        receiver.down()
        sent = [send(app, device.token, data={"n": str(n)}) for n in range(3)]
        for message in sent:
            assert device.message()["id"] in sent
        expected = []
        for message in sent:
            expected += [event["id"] for event in kept_events(server, app, message, ["accepted", "delivered"])]
        down_since = time.time()
        # A refused connection is tried until the request's deadline (10 s), then counted.
        deadline = time.time() + 20
        while "error: " not in (listing := server.cli("project", "webhook", "list", PROJECT)):
            assert time.time() < deadline, listing
            time.sleep(0.5)
        assert f"{webhook}\tactive" in listing and "failing" in listing
        time.sleep(max(0.0, 30 - (time.time() - down_since)))
        receiver.up()
        taken = receiver.wait_for(expected, seconds=60)
        assert {event["type"] for event in taken} == {"accepted", "delivered"}
        assert in_log_order(server, taken)
    finally:
        device.stop()
        remove_webhook(server, webhook)
        receiver.down()


def test_E5_after_kill_9_mid_fanout_every_event_arrives_at_least_once_with_the_same_ids(server, app, tmp_path):
    receiver = Receiver(free_port(), delay=0.05)
    webhook = add_webhook(server, receiver)
    devices = [
        HeraldDevice(server, PROJECT, tmp_path / f"fan-{n}.json", app_id="com.example.hooks") for n in range(8)]
    try:
        assert messaging.subscribe_to_topic([d.token for d in devices], "hooks", app=app).success_count == 8
        since = int(time.time() * 1000)
        topics = [messaging.send(messaging.Message(topic="hooks", data={"n": str(n)}), app=app) for n in range(5)]
        assert len(topics) == 5
        # Killed while the endpoint, slow, is still being sent the fanouts' events.
        deadline = time.time() + 10
        while len(receiver.taken()) < 5 and time.time() < deadline:
            time.sleep(0.02)
        server.process.kill()
        server.process.wait(timeout=10)
        before = {event["id"]: event for event in receiver.taken()}
        server.start("--allow-webhook-host", "127.0.0.1")
        exported = tmp_path / "events.jsonl"
        deadline = time.time() + 30
        while True:
            server.cli("events", "export", "--project", PROJECT, "--since", str(since), "--output", str(exported))
            rows = [json.loads(line) for line in exported.read_text().splitlines()]
            if sum(row["type"] == "delivered" for row in rows) >= 40 or time.time() > deadline:
                break
            time.sleep(0.5)
        assert sum(row["type"] == "accepted" for row in rows) == 5
        assert sum(row["type"] == "delivered" for row in rows) == 40
        taken = receiver.wait_for([row["id"] for row in rows], seconds=60)
        assert 0 < len(before) < len(rows)
        by_id = {}
        for event in taken:
            assert by_id.setdefault(event["id"], event) == event  # a repeat is the same event
        assert all(by_id[row["id"]] == row for row in rows)
    finally:
        for device in devices:
            device.process.kill()
        remove_webhook(server, webhook)
        receiver.down()


def test_E5_a_forged_or_replayed_signature_fails_the_documented_check(server, app, tmp_path):
    receiver = Receiver(free_port())
    webhook = add_webhook(server, receiver, "--events", "accepted")
    try:
        sent = messaging.send(messaging.Message(topic="nobody-here", data={"k": "v"}), app=app).rsplit("/", 1)[1]
        accepted = kept_events(server, app, sent, ["accepted"])[0]
        receiver.wait_for([accepted["id"]])
        headers, body = next((h, b) for h, b in receiver.requests if h["Herald-Event-Id"] == accepted["id"])
        signature = headers["Herald-Signature"]
        timestamp = int(dict(part.split("=", 1) for part in signature.split(","))["t"])
        assert verify(receiver.secret, signature, body)
        assert not verify(receiver.secret, signature, body.replace(b'"accepted"', b'"delivered"'))
        assert not verify("whsec_not-the-secret", signature, body)
        assert not verify(receiver.secret, signature, body, now=timestamp + 301)  # replayed six minutes on
        # The endpoint refuses a forged request outright.
        forged = urllib.request.Request(
            receiver.url, data=body, method="POST",
            headers={"Herald-Signature": f"t={int(time.time())},v1={'0' * 64}", "Content-Length": str(len(body))})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(forged, timeout=5)
        assert refused.value.code == 400
    finally:
        remove_webhook(server, webhook)
        receiver.down()


def webhook_entry(listing, webhook_id):
    """The lines `herald project webhook list` printed for one webhook: its own, then the
    indented ones under it."""
    lines = listing.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(webhook_id + "\t"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def refused_count(metrics):
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("herald_webhook_requests_total{") and 'outcome="refused"' in line)


def test_E5_a_target_the_server_would_refuse_is_refused_when_added(server):
    """A newcomer's `http://localhost` receiver: refused at once, naming the way to allow it,
    rather than added and paused at its first event."""
    for url in ["http://localhost:9000/hook", "http://example.com/hook", "https://10.0.0.1/hook", "ftp://x/"]:
        result = subprocess.run([HERALD, "project", "webhook", "add", PROJECT, "--url", url,
                                 "--data-dir", server.data_dir], capture_output=True, text=True, timeout=60)
        assert result.returncode != 0, result.stdout
        if url.startswith("ftp"):
            continue
        assert "--allow-webhook-host" in result.stderr, result.stderr
    # `localhost` is the allowed 127.0.0.1.
    hook = add_webhook(server, type("T", (), {"url": "http://localhost:9000/hook", "secret": None})())
    remove_webhook(server, hook)
    assert f"{hook}\t" not in server.cli("project", "webhook", "list", PROJECT)


def test_E5_herald_itself_and_plain_http_elsewhere_are_refused_targets(server, app):
    class Target:
        secret = None

        def __init__(self, url):
            self.url = url

    # Added with allowances the server does not have, or cannot know of: the server checks
    # again before each delivery.
    own = add_webhook(server, Target(f"{server.url}/v1/projects/{PROJECT}/messages:send"))
    plain = add_webhook(server, Target("http://example.invalid/hook"), "--allow-webhook-host", "example.invalid")
    metrics = server.metrics()
    try:
        messaging.send(messaging.Message(topic="nobody-here", data={"k": "v"}), app=app)
        deadline = time.time() + 10
        while time.time() < deadline:
            listing = server.cli("project", "webhook", "list", PROJECT)
            if f"{own}\tpaused" in listing and f"{plain}\tpaused" in listing:
                break
            time.sleep(0.2)
        assert f"{own}\tpaused" in listing and "one of Herald's own addresses" in listing
        assert f"{plain}\tpaused" in listing and "only https targets" in listing
        # Each refusal counts, so that the alert in docs/operations.md fires.
        assert refused_count(server.metrics()) == refused_count(metrics) + 2
        assert "resumed" in server.cli("project", "webhook", "resume", PROJECT, own)
        # Resumed, it is tried at once and its target is still refused, so it is paused again
        # with the reason a second time: a paused webhook is never tried, so the second shows
        # that the resume took effect.
        deadline = time.time() + 20
        while time.time() < deadline:
            entry = webhook_entry(server.cli("project", "webhook", "list", PROJECT), own)
            if sum("one of Herald's own addresses" in line for line in entry) == 2:
                break
            time.sleep(0.2)
        assert "\tpaused\t" in entry[0] and sum("one of Herald's own addresses" in line for line in entry) == 2, entry
    finally:
        remove_webhook(server, own)
        remove_webhook(server, plain)


@pytest.mark.skipif(not os.environ.get("HERALD_TEST_POSTGRES"), reason="no PostgreSQL: run through scripts/test")
def test_E5_with_two_nodes_events_of_a_message_delivered_through_the_other_node_arrive_once(tmp_path):
    from test_cluster import Node, create_projects, new_cluster

    cluster = new_cluster()
    cluster.nodes = {node_id: Node(cluster, node_id) for node_id in ("a", "b")}
    create_projects(cluster, ["compat-semantics"], cluster.nodes["a"].url)
    receiver = Receiver(free_port())
    try:
        for node in cluster.nodes.values():
            node.start("--allow-webhook-host", "127.0.0.1")
        output = subprocess.run(
            [HERALD, "project", "webhook", "add", "compat-semantics", "--url", receiver.url, "--store", cluster.store,
             "--allow-webhook-host", "127.0.0.1"],
            capture_output=True, text=True, timeout=60, check=True).stdout
        receiver.secret = printed_fields(output)["signing secret"]
        device = HeraldDevice(cluster.nodes["b"], "compat-semantics", tmp_path / "two.json")
        app = herald_sdk.initialize(
            cluster.nodes["a"].url, cluster.projects["compat-semantics"]["key_file"], name="hooks-two-nodes")
        try:
            sent = [send(app, device.token, data={"n": str(n)}) for n in range(5)]
            for _ in sent:
                assert device.message()["id"] in sent
            expected = []
            for message in sent:
                kept = kept_events(cluster.nodes["a"], app, message, ["accepted", "delivered"], project="compat-semantics")
                assert {event["node"] for event in kept} == {"a", "b"}  # accepted on a, delivered on b
                expected += [event["id"] for event in kept]
            receiver.wait_for(expected)
            time.sleep(3)  # long enough for a second copy to show up, were one sent
            taken = [event["id"] for event in receiver.taken()]
            assert sorted(taken) == sorted(expected)
        finally:
            device.stop()
    finally:
        for node in cluster.nodes.values():
            node.stop()
        receiver.down()
