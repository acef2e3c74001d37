"""Web Push (RFC 8030, 8291, 8292) from a real sender library: pywebpush with a VAPID key
made by py-vapid posts to a `herald device --web-push` subscription, encrypted with both
encodings; Herald relays bytes it cannot read, and the device decrypts them. Also the
endpoint's refusals, TTL 0, Topic replacement, withdrawal, push message receipts,
unsubscribing (L6), and UnifiedPush's discovery.
Rules: D2 (Topic replaces), D5/D6 (TTL), L4 (stored for an offline device), L6 (unsubscribed)."""
import base64
import json
import urllib.error
import urllib.request

import pytest
from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid
from pywebpush import WebPushException, webpush

from conftest import HeraldDevice, HeraldServer

CLAIMS = {"sub": "mailto:ops@example.com"}


def application_server_key(vapid):
    point = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(point).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def push_server():
    server = HeraldServer()
    server.projects = {"compat-webpush": server.create_project("compat-webpush")}
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def vapid():
    key = Vapid()
    key.generate_keys()
    return key


class Subscriber:
    """A `herald device --web-push` subscribed for the test's VAPID key; restartable with
    the same identity (and so the same subscription)."""

    def __init__(self, server, identity, vapid):
        self.server, self.identity, self.key = server, identity, application_server_key(vapid)
        self.start()

    def start(self):
        self.device = HeraldDevice(
            self.server, "compat-webpush", self.identity, "--web-push", "--application-server-key", self.key)
        self.endpoint = self.device.line().split(": ", 1)[1]
        self.subscription = {"endpoint": self.endpoint, "keys": json.loads(self.device.line().split(": ", 1)[1])}

    def push(self, vapid, data, **options):
        options.setdefault("ttl", 600)
        return webpush(self.subscription, data=data, vapid_private_key=vapid, vapid_claims=dict(CLAIMS), **options)

    def stop(self):
        self.device.stop()


@pytest.fixture
def subscriber(push_server, vapid, tmp_path):
    subscriber = Subscriber(push_server, tmp_path / "device.json", vapid)
    yield subscriber
    subscriber.stop()


@pytest.mark.parametrize("encoding", ["aes128gcm", "aesgcm"])
def test_pywebpush_messages_are_relayed_and_decrypted_online_and_after_being_offline(
        subscriber, vapid, encoding):
    answer = subscriber.push(vapid, f"online {encoding}", content_encoding=encoding)
    assert answer.status_code == 201 and answer.headers["TTL"] == "600"
    assert answer.headers["Location"].startswith(subscriber.endpoint.rsplit("/wp/", 1)[0] + "/wp/m/")
    assert subscriber.device.message()["push"] == f"online {encoding}"
    subscriber.stop()
    # L4: stored while the device is away, delivered when it is back.
    assert subscriber.push(vapid, f"offline {encoding}", content_encoding=encoding).status_code == 201
    subscriber.start()
    assert subscriber.device.message()["push"] == f"offline {encoding}"


def test_a_wrong_vapid_key_or_none_is_refused(subscriber):
    other = Vapid()
    other.generate_keys()
    with pytest.raises(WebPushException) as refused:
        subscriber.push(other, "from someone else")
    assert refused.value.response.status_code == 403
    # Made for a key: a message without VAPID is refused too.
    with pytest.raises(WebPushException) as missing:
        webpush(subscriber.subscription, data="anonymous", ttl=60)
    assert missing.value.response.status_code == 401
    subscriber.device.nothing()


def test_D6_ttl_0_to_an_offline_device_is_dropped_and_D2_a_topic_replaces_the_undelivered_message(
        subscriber, vapid):
    subscriber.stop()
    assert subscriber.push(vapid, "now or never", ttl=0).headers["TTL"] == "0"
    subscriber.push(vapid, "score 1-0", headers={"Topic": "score"})
    subscriber.push(vapid, "score 2-0", headers={"Topic": "score"})
    subscriber.start()
    assert subscriber.device.message()["push"] == "score 2-0"
    subscriber.device.nothing()


def test_delete_withdraws_an_undelivered_message(subscriber, vapid):
    subscriber.stop()
    location = subscriber.push(vapid, "withdrawn").headers["Location"]
    request = urllib.request.Request(location, method="DELETE")
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 204
    with pytest.raises(urllib.error.HTTPError) as again:
        urllib.request.urlopen(urllib.request.Request(location, method="DELETE"), timeout=5)
    assert again.value.code == 404
    subscriber.push(vapid, "kept")
    subscriber.start()
    assert subscriber.device.message()["push"] == "kept"
    subscriber.device.nothing()


def test_the_endpoint_refuses_what_rfc_8030_refuses_and_answers_unifiedpush_discovery(subscriber, vapid):
    def post(url, headers, body=b"x" * 120):
        request = urllib.request.Request(url, data=body, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    assert post(subscriber.endpoint, {"Content-Encoding": "aes128gcm"})[0] == 400  # no TTL
    assert post(subscriber.endpoint, {"TTL": "60", "Content-Encoding": "br"})[0] == 400
    assert post(subscriber.endpoint, {"TTL": "60", "Content-Encoding": "aes128gcm"}, b"x" * 4097)[0] == 413
    assert post(subscriber.endpoint, {"TTL": "60", "Content-Encoding": "aesgcm"})[0] == 400  # no Encryption
    unknown = subscriber.endpoint.rsplit("/", 1)[0] + "/not-a-channel"
    assert post(unknown, {"TTL": "60", "Content-Encoding": "aes128gcm"})[0] == 404
    with urllib.request.urlopen(subscriber.endpoint, timeout=5) as response:
        assert json.load(response) == {"unifiedpush": {"version": 1}}
    subscriber.device.nothing()
    # The endpoint a browser reports, /fcm/send/<token>, is the same channel.
    browser_style = dict(subscriber.subscription, endpoint=subscriber.endpoint.replace("/wp/", "/fcm/send/"))
    assert webpush(browser_style, data="via /fcm/send", vapid_private_key=vapid, vapid_claims=dict(CLAIMS),
                   ttl=60).status_code == 201
    assert subscriber.device.message()["push"] == "via /fcm/send"


def test_a_matrix_gateway_notification_reaches_a_unifiedpush_subscription(push_server, tmp_path):
    device = HeraldDevice(push_server, "compat-webpush", tmp_path / "up.json", "--web-push")  # no VAPID key
    endpoint = device.line().split(": ", 1)[1]
    device.line()  # keys
    base = endpoint.rsplit("/wp/", 1)[0]
    gateway = base + "/_matrix/push/v1/notify"
    try:
        with urllib.request.urlopen(gateway, timeout=5) as response:
            assert json.load(response) == {"unifiedpush": {"gateway": "matrix"}}
        notification = {"event_id": "$e1", "room_id": "!r:example.org", "prio": "high", "counts": {"unread": 1},
                        "devices": [{"app_id": "im.vector.app", "pushkey": endpoint},
                                    {"app_id": "im.vector.app", "pushkey": base + "/wp/gone-channel"},
                                    {"app_id": "im.vector.app", "pushkey": "https://elsewhere.example/push/1"}]}
        request = urllib.request.Request(gateway, data=json.dumps({"notification": notification}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=5) as response:
            assert json.load(response) == {"rejected": [base + "/wp/gone-channel"]}
        received = json.loads(device.message()["push"])
        assert received["notification"]["event_id"] == "$e1" and received["notification"]["counts"] == {"unread": 1}
    finally:
        device.stop()


def read_receipts(url, after=0, wait=0):
    request = urllib.request.Request(f"{url}?after={after}", headers={"Prefer": f"wait={wait}"})
    with urllib.request.urlopen(request, timeout=wait + 10) as response:
        return json.loads(response.read())["receipts"]


def test_a_receipt_arrives_after_the_device_acknowledges_and_survives_a_kill(vapid, tmp_path):
    """RFC 8030 section 5.1: Prefer: respond-async is answered 202 with a Link to a receipt
    subscription, which Push-Receipt names again; the receipts are kept in the store."""
    server = HeraldServer()
    server.projects = {"compat-webpush": server.create_project("compat-webpush")}
    server.start()
    subscriber = Subscriber(server, tmp_path / "device.json", vapid)
    try:
        subscriber.stop()
        first = subscriber.push(vapid, "with a receipt", headers={"Prefer": "respond-async"})
        assert first.status_code == 202
        link, relation = first.headers["Link"].split(";", 1)
        assert relation.strip() == 'rel="urn:ietf:params:push:receipt"'
        receipts_url = link.strip("<> ")
        assert receipts_url.startswith(f"{server.url}/wp/r/")
        second = subscriber.push(vapid, "into the same subscription", headers={"Push-Receipt": receipts_url})
        assert second.status_code == 201 and second.headers["Link"] == first.headers["Link"]
        assert read_receipts(receipts_url) == []
        subscriber.start()
        assert sorted(subscriber.device.message()["push"] for _ in range(2)) == [
            "into the same subscription", "with a receipt"]
        received = read_receipts(receipts_url, wait=10)
        while len(received) < 2:
            received += read_receipts(receipts_url, after=received[-1]["sequence"], wait=10)
        assert sorted(receipt["message"] for receipt in received) == sorted(
            [first.headers["Location"], second.headers["Location"]])
        subscriber.stop()
        # Kept in the store: a killed server still has them, until the sender says it read them.
        server.process.kill()
        server.process.wait()
        server.start()
        assert read_receipts(receipts_url) == received
        assert read_receipts(receipts_url, after=received[-1]["sequence"]) == []
        # A Push-Receipt that is not one of this service's subscriptions is refused.
        with pytest.raises(WebPushException) as refused:
            subscriber.push(vapid, "x", headers={"Push-Receipt": "https://elsewhere.example/r/1"})
        assert refused.value.response.status_code == 400
    finally:
        server.stop()


def test_L6_an_unsubscribed_subscription_answers_410_and_the_app_token_stays(subscriber, vapid):
    subscriber.device.command("unsubscribe")
    assert subscriber.device.line() == "unsubscribed"
    with pytest.raises(WebPushException) as gone:
        subscriber.push(vapid, "after unsubscribe")
    assert gone.value.response.status_code == 410
    discovery = urllib.request.Request(subscriber.endpoint)
    with pytest.raises(urllib.error.HTTPError) as again:
        urllib.request.urlopen(discovery, timeout=5)
    assert again.value.code == 410
    # The device's own FCM token is another registration: still there, still delivering.
    server, project = subscriber.server, subscriber.server.projects["compat-webpush"]
    legacy = urllib.request.Request(
        f"{server.url}/fcm/send", data=json.dumps({"to": subscriber.device.token, "data": {"k": "still"}}).encode(),
        headers={"Authorization": f"key={project['server_key']}", "Content-Type": "application/json"})
    with urllib.request.urlopen(legacy, timeout=5) as response:
        assert json.loads(response.read())["success"] == 1
    assert subscriber.device.message()["data"] == {"k": "still"}
