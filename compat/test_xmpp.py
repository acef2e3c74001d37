"""XMPP app-server connections as a real XMPP stack makes them: slixmpp logs in over TLS
(trusting Herald's CA) with SASL PLAIN as <sender id>@fcm.googleapis.com and the server
key, binds, and sends downstream messages in <gcm> stanzas, which `herald device` receives;
`herald device` sends upstream messages, which the app server receives and acknowledges.
Rules: C5 (the server key), T5 (connection limits), L1, and FCM's ack, nack, delivery
receipts, upstream messages and CONNECTION_DRAINING."""
import asyncio
import json
import os
import shutil
import signal
import ssl
import xml.sax.saxutils

import pytest
import slixmpp
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

from conftest import HeraldDevice, HeraldServer, free_port


class AppServer(slixmpp.ClientXMPP):
    """An app server's XMPP connection: JSON out in <gcm> stanzas, JSON in on a queue."""

    def __init__(self, server, project, key=None):
        super().__init__(f"{project['number']}@fcm.googleapis.com", key or project["server_key"])
        context = ssl.create_default_context(cafile=server.ca_file)
        context.check_hostname = False  # the certificate names 127.0.0.1, the JID fcm.googleapis.com
        self.ssl_context = context
        self.enable_starttls = False
        self.enable_plaintext = False
        self.received = asyncio.Queue()
        self.started = asyncio.Event()
        self.refused = asyncio.Event()
        self.add_event_handler("session_start", lambda _: self.started.set())
        self.add_event_handler("failed_auth", lambda _: self.refused.set())
        self.register_handler(Callback(
            "gcm", MatchXPath("{jabber:client}message/{google:mobile:data}gcm"),
            lambda message: self.received.put_nowait(
                json.loads(message.xml.find("{google:mobile:data}gcm").text))))

    def send_json(self, payload):
        self.send_raw('<message id=""><gcm xmlns="google:mobile:data">'
                      + xml.sax.saxutils.escape(json.dumps(payload)) + "</gcm></message>")

    async def next(self, seconds=10):
        return await asyncio.wait_for(self.received.get(), seconds)

    async def nothing(self, seconds=1.5):
        """Asserts that nothing arrives within `seconds`."""
        with pytest.raises(asyncio.TimeoutError):
            print(await self.next(seconds))


def run_with(devices, scenario):
    """Runs an asyncio scenario, then stops the devices whatever happened."""
    try:
        asyncio.run(scenario())
    finally:
        for device in devices:
            device.stop()


@pytest.fixture(scope="module")
def xmpp_server():
    server = HeraldServer()
    server.projects = {name: server.create_project(name) for name in ("compat-xmpp", "compat-other")}
    server.xmpp_port = free_port()
    server.start("--xmpp-port", str(server.xmpp_port))
    yield server
    server.stop()


async def logged_in(server, project, key=None):
    client = AppServer(server, project, key)
    client.connect("127.0.0.1", server.xmpp_port)
    await asyncio.wait_for(client.started.wait(), 20)
    return client


def test_slixmpp_logs_in_with_the_server_key_and_sends_downstream(xmpp_server, tmp_path):
    project = xmpp_server.projects["compat-xmpp"]
    device = HeraldDevice(xmpp_server, "compat-xmpp", tmp_path / "device.json", app_id="com.example.xmpp")

    async def scenario():
        client = await logged_in(xmpp_server, project)
        client.send_json({"to": device.token, "message_id": "m-1", "data": {"via": "xmpp"},
                          "delivery_receipt_requested": True, "time_to_live": 600})
        assert await client.next() == {"message_type": "ack", "from": device.token, "message_id": "m-1"}
        message = await asyncio.to_thread(device.message)
        assert message["data"] == {"via": "xmpp"}
        # The device acknowledged it: the app server gets FCM's delivery receipt.
        receipt = await client.next()
        assert receipt["message_type"] == "receipt" and receipt["message_id"] == "dr2:m-1", receipt
        assert receipt["from"] == "gcm.googleapis.com" and receipt["category"] == "com.example.xmpp"
        assert receipt["data"]["message_status"] == "MESSAGE_SENT_TO_DEVICE"
        assert receipt["data"]["original_message_id"] == "m-1"
        assert receipt["data"]["device_registration_id"] == device.token
        assert int(receipt["data"]["message_sent_timestamp"]) > 1_700_000_000_000
        client.send_json({"to": "gcm.googleapis.com", "message_id": "dr2:m-1", "message_type": "ack"})
        client.send_json({"to": "/topics/xmpp-news", "message_id": "m-2", "data": {"via": "topic"}})
        assert (await client.next())["message_type"] == "ack"
        client.disconnect()
        # Acknowledged: a new connection is not sent the receipt again.
        again = await logged_in(xmpp_server, project)
        await again.nothing()
        again.disconnect()

    run_with([device], scenario)


def test_upstream_messages_reach_the_app_server_until_it_acknowledges_them(xmpp_server, tmp_path):
    project = xmpp_server.projects["compat-xmpp"]
    device = HeraldDevice(xmpp_server, "compat-xmpp", tmp_path / "device.json", app_id="com.example.upstream")

    async def scenario():
        first = await logged_in(xmpp_server, project)
        device.command("upstream up-1 greeting=hello n=1")
        assert await asyncio.to_thread(device.line) == "sent: up-1"
        assert await first.next() == {
            "category": "com.example.upstream", "data": {"greeting": "hello", "n": "1"},
            "message_id": "up-1", "from": device.token}
        first.send_json({"to": device.token, "message_id": "up-1", "message_type": "ack"})
        # Not acknowledged: sent again on the next connection.
        device.command("upstream up-2 n=2")
        assert await asyncio.to_thread(device.line) == "sent: up-2"
        assert (await first.next())["message_id"] == "up-2"
        first.disconnect()
        await asyncio.sleep(0.5)
        second = await logged_in(xmpp_server, project)
        assert (await second.next())["message_id"] == "up-2"
        second.send_json({"to": device.token, "message_id": "up-2", "message_type": "ack"})
        await second.nothing()
        # More than 4 KB of data is refused on the device's connection.
        device.command("upstream up-3 big=" + "x" * 5000)
        assert await asyncio.to_thread(device.line) == "send-error: up-3 MessageTooBig"
        second.disconnect()

    run_with([device], scenario)


def test_bad_tokens_and_bad_messages_are_nacked_with_fcms_codes(xmpp_server, tmp_path):
    project = xmpp_server.projects["compat-xmpp"]
    other = HeraldDevice(xmpp_server, "compat-other", tmp_path / "other.json", app_id="com.example.xmpp")

    async def scenario():
        client = await logged_in(xmpp_server, project)
        unknown = other.token[:-4] + "AAAA"
        cases = [
            ({"to": "not a token", "message_id": "n-1"}, "BAD_REGISTRATION"),
            ({"to": unknown, "message_id": "n-2"}, "DEVICE_UNREGISTERED"),
            ({"to": other.token, "message_id": "n-3"}, "BAD_REGISTRATION"),  # C3: another project's token
            ({"to": other.token, "message_id": "n-4", "data": {"from": "x"}}, "INVALID_JSON"),
            ({"to": other.token, "message_id": "n-5", "time_to_live": "soon"}, "INVALID_JSON"),
        ]
        for payload, code in cases:
            client.send_json(payload)
            answer = await client.next()
            assert answer["message_type"] == "nack" and answer["message_id"] == payload["message_id"], answer
            assert answer["error"] == code, answer
        client.disconnect()

    try:
        asyncio.run(scenario())
        other.nothing()
    finally:
        other.stop()


def test_a_wrong_server_key_or_another_projects_sender_id_is_refused(xmpp_server):
    project = xmpp_server.projects["compat-xmpp"]
    other = xmpp_server.projects["compat-other"]

    async def refused(key):
        client = AppServer(xmpp_server, project, key)  # made inside the loop it runs on
        client.connect("127.0.0.1", xmpp_server.xmpp_port)
        await asyncio.wait_for(client.refused.wait(), 20)
        assert not client.started.is_set()
        client.disconnect()

    asyncio.run(refused("AAAA-not-the-key"))
    # C5: the client API key is not a server key; one project's key does not open another's sender id.
    asyncio.run(refused(project["api_key"]))
    asyncio.run(refused(other["server_key"]))


def test_a_stopping_node_sends_connection_draining_and_closes(tmp_path):
    server = HeraldServer()
    server.projects = {"compat-drain": server.create_project("compat-drain")}
    server.xmpp_port = free_port()
    server.start("--xmpp-port", str(server.xmpp_port))

    async def scenario():
        client = await logged_in(server, server.projects["compat-drain"])
        closed = asyncio.Event()
        client.add_event_handler("disconnected", lambda _: closed.set())
        server.process.send_signal(signal.SIGTERM)
        assert await client.next() == {"message_type": "control", "control_type": "CONNECTION_DRAINING"}
        await asyncio.wait_for(closed.wait(), 20)

    try:
        asyncio.run(scenario())
        assert server.process.wait(timeout=20) == 0
    finally:
        server.stop()


def test_upstream_messages_and_receipts_survive_sigkill_and_none_acked_comes_again(tmp_path):
    server = HeraldServer()
    server.projects = {"compat-crash-up": server.create_project("compat-crash-up")}
    project = server.projects["compat-crash-up"]
    server.xmpp_port = free_port()
    server.start("--xmpp-port", str(server.xmpp_port))
    device = HeraldDevice(server, "compat-crash-up", tmp_path / "device.json", app_id="com.example.crash")

    async def before():
        client = await logged_in(server, project)
        for index in range(1, 11):
            device.command(f"upstream up-{index} n={index}")
        sent = [await asyncio.to_thread(device.line) for _ in range(10)]
        assert sorted(sent) == sorted(f"sent: up-{index}" for index in range(1, 11))
        for index in range(1, 4):
            client.send_json({"to": device.token, "message_id": f"r-{index}", "data": {"n": str(index)},
                              "delivery_receipt_requested": True})
        received = {}
        while len(received) < 13:
            payload = await client.next()
            if payload.get("message_type") != "ack":
                received[payload["message_id"]] = payload
        assert set(received) == {f"up-{i}" for i in range(1, 11)} | {f"dr2:r-{i}" for i in range(1, 4)}
        # Half acknowledged; the rest is owed when the node dies.
        for index in range(1, 6):
            client.send_json({"to": device.token, "message_id": f"up-{index}", "message_type": "ack"})
        client.send_json({"to": "gcm.googleapis.com", "message_id": "dr2:r-1", "message_type": "ack"})
        await asyncio.sleep(1)

    async def after():
        client = await logged_in(server, project)
        owed = set()
        while True:
            try:
                payload = await client.next(seconds=3)
            except asyncio.TimeoutError:
                break
            assert payload["message_id"] not in owed, payload  # once each on one connection
            owed.add(payload["message_id"])
            client.send_json({"to": payload["from"], "message_id": payload["message_id"], "message_type": "ack"})
        assert owed == {f"up-{i}" for i in range(6, 11)} | {"dr2:r-2", "dr2:r-3"}
        client.disconnect()

    try:
        asyncio.run(before())
        for _ in range(3):
            device.message()  # the three downstream messages
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        server.start("--xmpp-port", str(server.xmpp_port))
        asyncio.run(after())
    finally:
        device.stop()
        server.stop()


@pytest.mark.skipif(not os.environ.get("HERALD_TEST_POSTGRES"), reason="no PostgreSQL: run through scripts/test")
def test_an_upstream_message_from_a_device_on_node_a_reaches_an_app_server_on_node_b(tmp_path):
    from test_cluster import Node, create_projects, new_cluster
    cluster = new_cluster()
    nodes = [Node(cluster, node_id) for node_id in ("a", "b")]
    create_projects(cluster, ["compat-xmpp-nodes"], nodes[0].url)
    for node in nodes:
        node.xmpp_port = free_port()
        node.start("--xmpp-port", str(node.xmpp_port))
    device = HeraldDevice(nodes[0], "compat-xmpp-nodes", tmp_path / "device.json", app_id="com.example.nodes")
    project = cluster.projects["compat-xmpp-nodes"]

    async def scenario():
        client = await logged_in(nodes[1], project)
        device.command("upstream across-1 from=a")
        assert await asyncio.to_thread(device.line) == "sent: across-1"
        assert await client.next() == {"category": "com.example.nodes", "data": {"from": "a"},
                                       "message_id": "across-1", "from": device.token}
        client.send_json({"to": device.token, "message_id": "across-1", "message_type": "ack"})
        # Downstream from node b with a receipt: the device on node a acknowledges it.
        client.send_json({"to": device.token, "message_id": "down-1", "data": {"via": "b"},
                          "delivery_receipt_requested": True})
        assert (await client.next())["message_type"] == "ack"
        assert (await asyncio.to_thread(device.message))["data"] == {"via": "b"}
        receipt = await client.next()
        assert receipt["message_id"] == "dr2:down-1" and receipt["data"]["device_registration_id"] == device.token
        client.send_json({"to": "gcm.googleapis.com", "message_id": "dr2:down-1", "message_type": "ack"})
        await client.nothing()
        client.disconnect()

    try:
        run_with([device], scenario)
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(cluster.directory, ignore_errors=True)

