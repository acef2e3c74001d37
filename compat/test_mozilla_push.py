"""Mozilla's push protocol on Herald's HTTP port, driven by a plain WebSocket client
(websocket-client) as Firefox and Sunup speak it (WIRE.md §8b), and pywebpush as the
application server: hello and a returning or unknown uaid, register with and without an
application server key, notifications and acks, store and forward, TTL, Topic, the size
limit, the owning project's events, bad input, and shutdown. Rules: W6, W7, N3."""
import base64
import json
import os
import signal
import socket
import time
import urllib.error
import urllib.request
import uuid

import http_ece
import pytest
import websocket
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02
from pywebpush import WebPushException, webpush

import herald_sdk
from conftest import serving

OWNER = "mozilla-owner"


def b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture(scope="module")
def herald():
    with serving([OWNER], "--mozilla-push-project", OWNER, "--login-timeout", "2") as herald:
        yield herald


class Browser:
    """One client of the protocol: its WebSocket, its uaid, and a receiving key pair."""

    def __init__(self, herald, uaid=None, keys_of=None):
        self.herald = herald
        self.socket = websocket.create_connection(f"ws://127.0.0.1:{herald.port}/", timeout=5)
        hello = {"messageType": "hello", "use_webpush": True, "broadcasts": {}}
        if uaid:
            hello["uaid"] = uaid
        self.send(hello)
        self.hello = self.receive()
        self.uaid = self.hello["uaid"]
        # The same browser started again keeps its receiving keys.
        self.receiver = keys_of.receiver if keys_of else ec.generate_private_key(ec.SECP256R1())
        self.auth = keys_of.auth if keys_of else os.urandom(16)

    def send(self, message):
        self.socket.send(json.dumps(message))

    def receive(self):
        return json.loads(self.socket.recv())

    def register(self, key=None):
        channel = str(uuid.uuid4())
        message = {"messageType": "register", "channelID": channel}
        if key is not None:
            message["key"] = key
        self.send(message)
        reply = self.receive()
        assert reply["messageType"] == "register" and reply["channelID"] == channel
        return channel, reply

    def subscription(self, endpoint):
        public = self.receiver.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": endpoint, "keys": {"p256dh": b64(public), "auth": b64(self.auth)}}

    def notification(self):
        message = self.receive()
        assert message["messageType"] == "notification", message
        return message

    def decrypt(self, notification):
        return http_ece.decrypt(unb64(notification["data"]), private_key=self.receiver, auth_secret=self.auth,
                                version=notification["headers"]["encoding"]).decode()

    def ack(self, channel, notification):
        self.send({"messageType": "ack", "updates": [{"channelID": channel, "version": notification["version"]}]})

    def nothing(self, seconds=1.0):
        self.socket.settimeout(seconds)
        try:
            message = self.socket.recv()
        except websocket.WebSocketTimeoutException:
            return
        finally:
            self.socket.settimeout(5)
        raise AssertionError(f"unexpected: {message}")

    def closed_with(self):
        """The close code the server ended the connection with."""
        self.socket.settimeout(5)
        try:
            while True:
                opcode, data = self.socket.recv_data(control_frame=True)
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    return int.from_bytes(data[:2], "big") if len(data) >= 2 else None
        except (websocket.WebSocketConnectionClosedException, ConnectionError):
            return None

    def close(self):
        self.socket.close()


def vapid_key():
    vapid = Vapid02()
    vapid.generate_keys()
    raw = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return vapid, b64(raw)


def subscribed(herald):
    """A new browser with one channel restricted to a new key: the browser, the key's
    signer, the channel and the subscription an application server is given."""
    browser = Browser(herald)
    vapid, key = vapid_key()
    channel, reply = browser.register(key)
    assert reply["status"] == 200
    return browser, vapid, channel, browser.subscription(reply["pushEndpoint"])


def push(subscription, vapid, text, **options):
    return webpush(subscription, data=text, vapid_private_key=vapid,
                   vapid_claims={"sub": "mailto:ops@example.com"}, **{"ttl": 600, **options})


def test_W6_hello_register_push_ack_with_the_channels_key(herald):
    browser = Browser(herald)
    assert browser.hello["status"] == 200 and browser.hello["use_webpush"] is True
    assert len(browser.uaid) == 32
    vapid, key = vapid_key()
    channel, reply = browser.register(key)
    assert reply["status"] == 200 and reply["pushEndpoint"].startswith(f"{herald.url}/wp/")
    subscription = browser.subscription(reply["pushEndpoint"])
    response = push(subscription, vapid, "to firefox ✓")
    assert response.status_code == 201
    note = browser.notification()
    assert note["channelID"] == channel and note["headers"] == {"encoding": "aes128gcm"}
    assert browser.decrypt(note) == "to firefox ✓"
    browser.ack(channel, note)
    # Restricted to its key (RFC 8292): another key is refused, and so is none.
    other, _ = vapid_key()
    with pytest.raises(WebPushException) as refused:
        push(subscription, other, "not mine")
    assert refused.value.response.status_code == 403
    plain = urllib.request.Request(reply["pushEndpoint"], data=b"", method="POST", headers={"TTL": "60"})
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(plain, timeout=5)
    assert missing.value.code == 401
    browser.nothing()
    # The same channel again answers the same endpoint; under another key it is refused.
    browser.send({"messageType": "register", "channelID": channel, "key": key})
    assert browser.receive()["pushEndpoint"] == reply["pushEndpoint"]
    browser.send({"messageType": "register", "channelID": channel})
    assert browser.receive()["status"] == 409
    browser.send({"messageType": "register", "channelID": str(uuid.uuid4()), "key": "bm90IGEga2V5"})
    assert browser.receive()["status"] == 400
    browser.close()


def test_W6_the_message_is_the_owning_projects_with_its_events(herald):
    browser, vapid, channel, subscription = subscribed(herald)
    response = push(subscription, vapid, "counted")
    message_id = response.headers["Location"].rsplit("/", 1)[1]
    note = browser.notification()
    assert note["version"] == message_id
    browser.ack(channel, note)
    app = herald_sdk.initialize(herald.url, herald.projects[OWNER]["key_file"], name="mozilla-owner")
    token = app.credential.get_access_token().access_token
    deadline = time.time() + 10
    while True:
        request = urllib.request.Request(f"{herald.url}/v1/projects/{OWNER}/messages/{message_id}",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=5) as answer:
            status = json.load(answer)
        if status["counts"]["delivered"] == 1:
            break
        assert time.time() < deadline, status
        time.sleep(0.1)
    assert status["target"]["kind"] == "token"
    request = urllib.request.Request(f"{herald.url}/v1/projects/{OWNER}/messages/{message_id}/events",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        kinds = [event["type"] for event in json.load(answer)["events"]]
    assert kinds[0] == "accepted" and "delivered" in kinds
    browser.close()


def test_W7_stored_while_away_removed_only_on_ack_and_ttl_zero_not_kept(herald):
    browser, vapid, channel, subscription = subscribed(herald)
    browser.close()
    push(subscription, vapid, "kept")
    push(subscription, vapid, "now or never", ttl=0)
    push(subscription, vapid, "first of topic", headers={"Topic": "news"})
    push(subscription, vapid, "second of topic", headers={"Topic": "news"})
    # A returning uaid gets what waited, the topic's newest only, and TTL 0 never.
    again = Browser(herald, uaid=browser.uaid, keys_of=browser)
    assert again.uaid == browser.uaid
    notes = [again.notification(), again.notification()]
    assert sorted(again.decrypt(note) for note in notes) == ["kept", "second of topic"]
    again.nothing()
    # Not acknowledged: sent again at the next connection; acknowledged: gone.
    again.close()
    third = Browser(herald, uaid=browser.uaid, keys_of=browser)
    renotes = [third.notification(), third.notification()]
    assert sorted(third.decrypt(note) for note in renotes) == ["kept", "second of topic"]
    for note in renotes:
        third.ack(channel, note)
    third.send({})
    assert third.receive() == {}
    third.close()
    time.sleep(0.5)
    fourth = Browser(herald, uaid=browser.uaid)
    fourth.nothing()
    # Unregistered: its endpoint is gone.
    fourth.send({"messageType": "unregister", "channelID": channel})
    assert fourth.receive() == {"messageType": "unregister", "channelID": channel, "status": 200}
    with pytest.raises(WebPushException) as gone:
        push(subscription, vapid, "after unregister")
    assert gone.value.response.status_code == 410
    fourth.close()


def test_W6_an_unknown_uaid_is_given_a_new_one(herald):
    stranger = Browser(herald, uaid="0123456789abcdef0123456789abcdef")
    assert stranger.uaid != "0123456789abcdef0123456789abcdef"
    other = Browser(herald, uaid="not-one-of-ours")
    assert len(other.uaid) == 32
    stranger.close()
    other.close()


def test_W6_the_body_limit_and_urgency(herald):
    browser, vapid, _, subscription = subscribed(herald)
    with pytest.raises(WebPushException) as large:
        push(subscription, vapid, "x" * 4100)
    assert large.value.response.status_code == 413
    assert push(subscription, vapid, "urgent", headers={"Urgency": "high"}).status_code == 201
    assert browser.decrypt(browser.notification()) == "urgent"
    browser.close()


def raw_connection(herald, version=13):
    """A connection that asked for a WebSocket of `version`; answered 101 when it is 13."""
    connection = socket.create_connection(("127.0.0.1", herald.port), timeout=5)
    connection.sendall(b"GET / HTTP/1.1\r\nHost: push\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                       + f"Sec-WebSocket-Version: {version}\r\n\r\n".encode())
    if version == 13:
        assert b" 101 " in connection.recv(1024)
    return connection


def closed_within(connection, seconds):
    connection.settimeout(seconds)
    try:
        while connection.recv(4096):
            pass
    except socket.timeout:
        return False
    return True


def test_N3_bad_input_closes_and_changes_nothing(herald):
    # Anything before hello, malformed JSON, an unknown type, a second hello.
    for first in ['{"messageType":"register","channelID":"e945b639-94df-457e-8e51-631d29956ce9"}', "{",
                  '{"messageType":"purge"}']:
        client = websocket.create_connection(f"ws://127.0.0.1:{herald.port}/", timeout=5)
        client.send(first)
        assert Browser.closed_with(type("C", (), {"socket": client})()) == 1002
    browser = Browser(herald)
    browser.send({"messageType": "hello"})
    assert browser.closed_with() == 1002
    # A binary message, and a frame past the limit.
    browser = Browser(herald)
    browser.socket.send_binary(b"\x00\x01")
    assert browser.closed_with() == 1003
    browser = Browser(herald)
    browser.socket.send(json.dumps({"messageType": "ack", "updates": [], "pad": "x" * 20_000}))
    # Closed with 1009; the close frame may be lost to the reset of the unread bytes.
    assert browser.closed_with() in (1009, None)
    # A register flood is cut off.
    browser = Browser(herald)
    for _ in range(60):
        browser.send({"messageType": "register", "channelID": str(uuid.uuid4())})
        assert browser.receive()["status"] == 200
    browser.send({"messageType": "register", "channelID": str(uuid.uuid4())})
    assert browser.closed_with() == 1008
    # Pings more often than every 45 seconds are refused.
    browser = Browser(herald)
    browser.send({})
    assert browser.receive() == {}
    browser.send({})
    assert browser.closed_with() == 1008
    # A client that never says hello is closed after the login timeout.
    silent = raw_connection(herald)
    assert closed_within(silent, 6)
    # An upgrade of another WebSocket version is told which one is spoken, and closed.
    old = raw_connection(herald, version=8)
    answer = old.recv(4096)
    assert answer.startswith(b"HTTP/1.1 426 ") and b"sec-websocket-version: 13\r\n" in answer
    assert closed_within(old, 5)
    # A plain request on the WebSocket's address is still HTTP.
    with urllib.request.urlopen(f"{herald.url}/healthz", timeout=5) as answer:
        assert answer.status == 200


def test_W6_not_served_without_an_owning_project():
    with serving(["no-mozilla"]) as plain:
        with pytest.raises(websocket.WebSocketBadStatusException):
            websocket.create_connection(f"ws://127.0.0.1:{plain.port}/", timeout=5)


def test_W6_sigterm_tells_every_client_to_go_away():
    with serving([OWNER], "--mozilla-push-project", OWNER) as herald:
        browsers = [Browser(herald) for _ in range(20)]
        started = time.time()
        herald.process.send_signal(signal.SIGTERM)
        codes = [browser.closed_with() for browser in browsers]
        assert codes.count(1001) == 20, codes
        assert herald.process.wait(timeout=15) == 0
        assert time.time() - started < 15
