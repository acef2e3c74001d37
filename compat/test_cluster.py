"""Three `herald serve` nodes on loopback sharing one PostgreSQL database, driven by
firebase-admin and received by `herald device`: cross-node delivery (stored and TTL 0, a
v1 message and a Web Push message with its receipt), a topic fanout over devices on every
node, a node killed with SIGKILL while messages flow, and one project quota across nodes. Rules: L4 (store and forward), D6 (TTL 0), T1 (quota),
T3 (fanout).

Runs when the test command started PostgreSQL (HERALD_TEST_POSTGRES); skipped otherwise."""
import asyncio
import json
import os
import queue
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import types
import urllib.parse
import urllib.request

import pytest
from firebase_admin import exceptions, messaging
from pywebpush import webpush

import herald_sdk
from conftest import HERALD, HeraldDevice, ServeProcess, free_port, printed_fields, wait_until_healthy
from test_semantics import Device

POSTGRES = os.environ.get("HERALD_TEST_POSTGRES")
pytestmark = pytest.mark.skipif(not POSTGRES, reason="no PostgreSQL: run through scripts/test (HERALD_TEST_POSTGRES)")
PROJECT = "compat-semantics"
QUOTA_PROJECT = "cluster-quota"


def new_database():
    """A new empty database on the test server; answers its URL."""
    name = "herald_cluster_" + secrets.token_hex(6)
    subprocess.run(["psql", POSTGRES, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    parts = urllib.parse.urlsplit(POSTGRES)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


class Node(ServeProcess):
    """One `herald serve --store` process (of `binary`, this build's by default); all nodes
    share a data directory only for the gateway's TLS certificate authority, which devices
    trust."""

    def __init__(self, cluster, node_id, data_dir=None, named=True, binary=None):
        self.binary = binary or HERALD
        self.cluster = cluster
        self.node_id = node_id
        self.named = named  # False: started without --node-id
        self.data_dir = data_dir or cluster.data_dir
        self.port = free_port()
        self.gateway_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ca_file = os.path.join(self.data_dir, "tls", "ca.pem")
        self.projects = cluster.projects
        self.process = None

    def start(self, *extra):
        log = open(os.path.join(self.cluster.directory, f"{self.node_id}.log"), "ab")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--store", self.cluster.store, *(["--node-id", self.node_id] if self.named else []),
             "--data-dir", self.data_dir, "--http-port", str(self.port),
             "--gateway-port", str(self.gateway_port), "--database-connections", "8", *extra],
            stdout=log, stderr=subprocess.STDOUT,
        )
        wait_until_healthy(self.url)


def new_cluster():
    """A fresh database and a folder for the nodes' files; no node, no project yet."""
    directory = tempfile.mkdtemp(prefix="herald-cluster-")
    return types.SimpleNamespace(
        directory=directory, data_dir=os.path.join(directory, "data"), store=new_database(), projects={})


def create_projects(cluster, projects, public_url, binary=None):
    """Creates `projects` in the cluster's database (with `binary`, this build's by default),
    their key files naming `public_url`."""
    for project in projects:
        output = subprocess.run(
            [binary or HERALD, "project", "create", project, "--public-url", public_url, "--key-dir", cluster.directory,
             "--store", cluster.store],
            capture_output=True, text=True, timeout=60, check=True).stdout
        fields = printed_fields(output)
        cluster.projects[project] = {
            "id": project, "key_file": fields["key file"], "number": fields["project number"].split()[0],
            "api_key": fields["api key"], "server_key": fields["server key"],
        }


@pytest.fixture(scope="module")
def cluster():
    cluster = new_cluster()
    cluster.nodes = {node_id: Node(cluster, node_id) for node_id in ("a", "b", "c")}
    create_projects(cluster, (PROJECT, QUOTA_PROJECT), cluster.nodes["a"].url)
    subprocess.run(
        [HERALD, "project", "set", QUOTA_PROJECT, "downstream-per-minute=10", "--store", cluster.store],
        check=True, capture_output=True, timeout=60)
    # One at a time: the first creates the gateway CA the others load.
    for node in cluster.nodes.values():
        node.start()
    yield cluster
    for node in cluster.nodes.values():
        node.stop()
    shutil.rmtree(cluster.directory, ignore_errors=True)


def app_for(cluster, node_id, name, project=PROJECT):
    """A firebase-admin app whose API calls go to one node (tokens come from node a)."""
    return herald_sdk.initialize(cluster.nodes[node_id].url, cluster.projects[project]["key_file"], name=name)


def message_id(name):
    return name.rsplit("/", 1)[1]


def test_L4_a_device_on_node_b_receives_what_node_a_accepted(cluster, tmp_path):
    device = Device(cluster.nodes["b"], tmp_path / "d.json")
    try:
        app = app_for(cluster, "a", "cluster-a")
        name = messaging.send(messaging.Message(token=device.token, data={"via": "a"}), app=app)
        line = device.message()
        assert line["id"] == message_id(name)
        assert line["data"] == {"via": "a"}
    finally:
        device.stop()


def test_D6_a_ttl_0_message_reaches_a_device_held_by_another_node(cluster, tmp_path):
    device = Device(cluster.nodes["c"], tmp_path / "now.json")
    try:
        app = app_for(cluster, "a", "cluster-now")
        name = messaging.send(
            messaging.Message(token=device.token, data={"now": "1"}, android=messaging.AndroidConfig(ttl=0)), app=app)
        assert device.message()["id"] == message_id(name)
    finally:
        device.stop()


def test_D6_a_ttl_0_web_push_reaches_a_subscription_on_another_node_and_any_node_reads_its_receipt(
        cluster, tmp_path):
    """A Web Push message with TTL 0 posted to node a hops to node c, which holds the
    subscription; the device's acknowledgement on c keeps the receipt, which node b reads."""
    device = HeraldDevice(cluster.nodes["c"], PROJECT, tmp_path / "push.json", "--web-push")
    try:
        token = device.line().split(": ", 1)[1].rsplit("/", 1)[1]
        keys = json.loads(device.line().split(": ", 1)[1])
        subscription = {"endpoint": f"{cluster.nodes['a'].url}/wp/{token}", "keys": keys}
        # A stored message first: once it is in, the device's connection to node c is up.
        webpush(subscription, data="stored", ttl=60)
        assert device.message()["push"] == "stored"
        answer = webpush(subscription, data="now, through a", ttl=0, headers={"Prefer": "respond-async"})
        assert answer.status_code == 202 and answer.headers["TTL"] == "0"
        assert device.message()["push"] == "now, through a"
        receipts = answer.headers["Link"].split(";", 1)[0].strip("<> ")
        assert receipts.startswith(cluster.nodes["a"].url)
        request = urllib.request.Request(
            receipts.replace(cluster.nodes["a"].url, cluster.nodes["b"].url), headers={"Prefer": "wait=10"})
        with urllib.request.urlopen(request, timeout=20) as response:
            read = json.loads(response.read())["receipts"]
        # Each node names resources by its own URL (nodes behind one balancer share one).
        assert [receipt["message"] for receipt in read] == [
            answer.headers["Location"].replace(cluster.nodes["a"].url, cluster.nodes["b"].url)]
    finally:
        device.stop()


def test_T3_a_topic_reaches_devices_on_every_node_exactly_once(cluster, tmp_path):
    devices = [Device(cluster.nodes[node], tmp_path / f"{node}{i}.json") for node in "abc" for i in range(2)]
    try:
        app = app_for(cluster, "a", "cluster-topic-a")
        assert messaging.subscribe_to_topic([d.token for d in devices], "everywhere", app=app).success_count == 6
        sent = messaging.send(
            messaging.Message(topic="everywhere", data={"t": "1"}), app=app_for(cluster, "c", "cluster-topic-c"))
        for device in devices:
            assert device.message()["id"] == message_id(sent)
        # A marker sent to each device after the topic message is the next thing it sees: no second copy.
        for device in devices:
            marker = messaging.send(messaging.Message(token=device.token, data={"marker": "1"}), app=app)
            assert device.message()["id"] == message_id(marker)
    finally:
        for device in devices:
            device.stop()


def test_L4_killing_node_b_loses_no_accepted_message(cluster, tmp_path):
    """Messages flow to two devices held by node b; b is killed with SIGKILL halfway. The
    devices come back on node c (as they would through a balancer) and, together with what
    they saw before, have received every accepted message; only the last each showed before
    its own kill may show twice."""
    node_b, node_c = cluster.nodes["b"], cluster.nodes["c"]
    identities = [tmp_path / "k1.json", tmp_path / "k2.json"]
    devices = [Device(node_b, identity) for identity in identities]
    tokens = [device.token for device in devices]
    app = app_for(cluster, "a", "cluster-kill")
    accepted = {token: [] for token in tokens}
    errors = queue.Queue()

    def send_all():
        for i in range(60):
            for token in tokens:
                try:
                    name = messaging.send(messaging.Message(token=token, data={"n": str(i)}), app=app)
                    accepted[token].append(message_id(name))
                except exceptions.FirebaseError as error:  # refused: not accepted, so not owed
                    errors.put(error)
            time.sleep(0.02)

    sender = threading.Thread(target=send_all)
    sender.start()
    time.sleep(0.6)
    node_b.kill()
    # The devices notice their connection is gone; they are replaced by the same app
    # instances (same identity files) connecting to node c.
    before = {token: [json.loads(line)["id"] for line in device.kill() if line.startswith("{")]
              for device, token in zip(devices, tokens)}
    sender.join(timeout=60)
    assert errors.empty(), f"sends refused while a node was down: {list(errors.queue)}"
    revived = [Device(node_c, identity) for identity in identities]
    try:
        for device, token in zip(revived, tokens):
            assert device.token == token
            after = []
            deadline = time.time() + 30
            while set(before[token] + after) != set(accepted[token]) and time.time() < deadline:
                try:
                    after.append(device.message(timeout=1)["id"])
                except queue.Empty:
                    pass
            assert len(accepted[token]) == 60
            missing = set(accepted[token]) - set(before[token] + after)
            assert not missing, f"{len(missing)} accepted messages never arrived"
            assert len(before[token]) == len(set(before[token])), "node b delivered a message to the app twice"
            assert len(after) == len(set(after)), "node c delivered a message to the app twice"
            # The app records a message as handled when it asks for the next, so the one it
            # showed last before it was killed may show again after the restart; no other.
            again = set(before[token]) & set(after)
            assert again <= set(before[token][-1:]), f"shown again after the restart: {again}"
    finally:
        for device in revived:
            device.stop()
        node_b.start()


def test_T1_the_project_quota_holds_across_nodes(cluster):
    """A project allowed 10 messages a minute sends 15, spread over the three nodes: 10 are
    accepted in all, not 10 per node."""
    apps = {node: app_for(cluster, node, f"cluster-quota-{node}", QUOTA_PROJECT) for node in "abc"}
    # The async path reports a 429 at once (the sync one waits out Retry-After and retries).
    # The loop stays open: deleting the apps afterwards closes their async clients on it.
    loop = asyncio.new_event_loop()
    outcomes = []
    for i in range(15):
        message = messaging.Message(topic="quota", data={"i": str(i)})
        batch = loop.run_until_complete(messaging.send_each_async([message], app=apps["abc"[i % 3]]))
        error = batch.responses[0].exception
        assert error is None or isinstance(error, messaging.QuotaExceededError), error
        outcomes.append("refused" if error else "accepted")
        time.sleep(0.6)  # a count reaches the other nodes within two exchange intervals (400 ms)
    assert outcomes.count("accepted") == 10, outcomes


def test_nodes_without_node_id_take_ids_of_their_own_and_a_live_nodes_id_is_refused(tmp_path):
    """Two nodes started without --node-id, each with its data directory, on one database:
    they derive different ids, keep them, and deliver across nodes; a third node asking for
    a live node's id exits with a message naming the id, the holder's address and its
    last heartbeat."""
    cluster = new_cluster()
    a = Node(cluster, "unnamed-a", data_dir=os.path.join(cluster.directory, "a"), named=False)
    b = Node(cluster, "unnamed-b", data_dir=os.path.join(cluster.directory, "b"), named=False)
    create_projects(cluster, [PROJECT], a.url)
    try:
        a.start()
        shutil.copytree(os.path.join(a.data_dir, "tls"), os.path.join(b.data_dir, "tls"))  # one CA for devices
        b.start()
        ids = [open(os.path.join(node.data_dir, "node-id")).read().strip() for node in (a, b)]
        assert ids[0] and ids[1] and ids[0] != ids[1]

        device = Device(b, tmp_path / "unnamed.json")
        try:
            app = herald_sdk.initialize(a.url, cluster.projects[PROJECT]["key_file"], name="unnamed-a")
            for attempt in range(3):
                name = messaging.send(messaging.Message(token=device.token, data={"n": str(attempt)}), app=app)
                assert device.message()["id"] == message_id(name)
        finally:
            device.stop()

        third = subprocess.run(
            [HERALD, "serve", "--store", cluster.store, "--node-id", ids[0], "--data-dir", str(tmp_path / "third"),
             "--http-port", str(free_port()), "--gateway-port", str(free_port())],
            capture_output=True, text=True, timeout=60)
        assert third.returncode != 0
        output = third.stdout + third.stderr
        assert f'node id "{ids[0]}" is held by a live node' in output
        assert f"HTTP 127.0.0.1:{a.port}" in output and "last heartbeat" in output
        assert a.process.poll() is None  # the holder is untouched

        # A restart keeps the id it derived.
        a.stop()
        a.start()
        assert open(os.path.join(a.data_dir, "node-id")).read().strip() == ids[0]
    finally:
        a.stop()
        b.stop()
        shutil.rmtree(cluster.directory, ignore_errors=True)


def test_A3_with_two_nodes_each_apns_hand_off_is_made_by_one_node(tmp_path):
    from apns_simulator import APNsSimulator, make_p8
    simulator = APNsSimulator()
    pem = make_p8()
    simulator.set_keys({"KEY1234567": ("TEAM123456", pem)})
    cluster = new_cluster()
    nodes = [Node(cluster, node_id) for node_id in ("apns-a", "apns-b")]
    try:
        create_projects(cluster, ("cluster-apns",), nodes[0].url)
        key_file = tmp_path / "key.p8"
        key_file.write_text(pem)
        subprocess.run([HERALD, "project", "apns-key", "cluster-apns", "--key-file", str(key_file), "--key-id",
                        "KEY1234567", "--team-id", "TEAM123456", "--bundle-id", "com.example.cluster",
                        "--store", cluster.store], check=True, capture_output=True, timeout=60)
        url = f"https://127.0.0.1:{simulator.port}"
        for node in nodes:
            node.start("--apns-production-url", url, "--outbound-ca", simulator.ca_file)
        project = cluster.projects["cluster-apns"]
        tokens = [simulator.add_device("com.example.cluster") for _ in range(50)]
        request = urllib.request.Request(
            f"{nodes[1].url}/iid/v1:batchImport", method="POST",
            data=json.dumps({"application": "com.example.cluster", "apns_tokens": tokens}).encode(),
            headers={"Authorization": f"key={project['server_key']}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            registrations = [r["registration_token"] for r in json.loads(response.read())["results"]]
        sent = set()
        for index, node in enumerate(nodes):
            app = herald_sdk.initialize(node.url, project["key_file"], name=f"cluster-apns-{index}")
            answer = messaging.send_each(
                [messaging.Message(token=registrations[i % 50], data={"n": str(i)}) for i in range(200)], app=app)
            assert answer.success_count == 200
            sent |= {message_id(r.message_id) for r in answer.responses}
        deadline = time.time() + 60
        while len(simulator.accepted()) < 400 and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(2)  # a second hand-off of any, were there one, would come now
        received = [r["payload"]["gcm.message_id"] for r in simulator.accepted()]
        assert len(received) == 400 and set(received) == sent
    finally:
        for node in nodes:
            node.stop()
        simulator.close()
        shutil.rmtree(cluster.directory, ignore_errors=True)
