"""Tokens Herald did not issue, handed to FCM (SEMANTICS R1–R6). A second Herald plays
Google: its project's service-account key file is the first Herald's relay key, the first
Herald's `--fcm-url` points at its drop-in HTTPS listener (HTTP/2), and a device registered
with it holds a token the first Herald has never seen. firebase-admin sends to the first."""
import json
import os
import signal
import time

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HeraldDevice, HeraldServer, counter, event_types, free_port, wait_for

APP = "relay-app"
GOOGLE = "relay-google"


class Relay:
    """The first Herald (the app server's) and the second (Google's)."""

    def __init__(self):
        self.google = HeraldServer()
        self.google.projects = {GOOGLE: self.google.create_project(GOOGLE)}
        self.drop_in_port, self.xmpp_port = free_port(), free_port()
        self.start_google()
        self.herald = HeraldServer()
        self.herald.projects = {APP: self.herald.create_project(APP)}
        self.herald.cli("project", "fcm-relay", APP, "--service-account", self.google.projects[GOOGLE]["key_file"])
        self.start_herald()

    def start_google(self, *extra):
        self.google.start("--drop-in", "--drop-in-port", str(self.drop_in_port), "--drop-in-hostname", "localhost",
                          "--xmpp-port", str(self.xmpp_port),
                          *extra)

    def start_herald(self):
        self.herald.start("--fcm-url", f"https://localhost:{self.drop_in_port}",
                          "--outbound-ca", os.path.join(self.google.data_dir, "tls", "drop-in-ca.pem"))

    @property
    def app(self):
        import firebase_admin
        try:
            return firebase_admin.get_app("relay")
        except ValueError:
            return herald_sdk.initialize(self.herald.url, self.herald.projects[APP]["key_file"], name="relay")

    def device(self, identity):
        return HeraldDevice(self.google, GOOGLE, os.path.join(self.google.directory, f"device-{identity}.json"))

    def close(self):
        self.herald.stop()
        self.google.stop()


@pytest.fixture(scope="module")
def relay():
    r = Relay()
    yield r
    r.close()


def test_a_notification_and_a_data_message_reach_a_device_of_google_with_android_options_intact(relay):
    device = relay.device("a")
    try:
        name = messaging.send(messaging.Message(
            token=device.token, notification=messaging.Notification(title="Score", body="2-1"),
            android=messaging.AndroidConfig(collapse_key="match", priority="high",
                                            notification=messaging.AndroidNotification(channel_id="goals"))),
            app=relay.app)
        assert name.startswith(f"projects/{APP}/messages/")
        shown = device.message(timeout=20)
        assert shown["notification"] == {"title": "Score", "body": "2-1", "android_channel_id": "goals"}
        assert shown["priority"] == "high"
        messaging.send(messaging.Message(token=device.token, data={"k": "v"}), app=relay.app)
        data = device.message(timeout=20)
        assert data["data"]["k"] == "v"
        # Herald's own id answered at once; the hand-off is an event of the message.
        wait_for(lambda: counter(relay.herald.metrics(), "herald_fcm_hand_offs_total", 'outcome="delivered"') >= 2)
        # The hand-off is an event of the message, and the deleted token's wait ends as one too.
        assert wait_for(lambda: event_types(relay.herald, APP, name, relay.app)) == ["accepted", "handed_off"]
        # One access token serves every hand-off.
        assert counter(relay.google.metrics(), "herald_http_requests_total", 'route="/token"') == 1
    finally:
        device.stop()


def test_a_deleted_token_at_google_is_unregistered_on_the_next_send(relay):
    device = relay.device("b")
    token = device.token
    device.command("uninstall")
    device.stop()
    messaging.send(messaging.Message(token=token, data={"k": "1"}), app=relay.app)
    wait_for(lambda: _unregistered(relay, token), timeout=20)


def test_herald_tokens_stay_with_herald_even_deleted(relay):
    status_before = counter(relay.herald.metrics(), "herald_fcm_hand_offs_total")
    device = HeraldDevice(relay.herald, APP, os.path.join(relay.herald.directory, "own.json"))
    token = device.token
    messaging.send(messaging.Message(token=token, data={"own": "1"}), app=relay.app)
    assert device.message()["data"]["own"] == "1"
    device.command("uninstall")
    device.stop()
    wait_for(lambda: _unregistered(relay, token), timeout=20)
    assert counter(relay.herald.metrics(), "herald_fcm_hand_offs_total") == status_before


def _unregistered(relay, token):
    """Whether a send to `token` is answered UNREGISTERED (else it is accepted)."""
    try:
        messaging.send(messaging.Message(token=token, data={"again": "1"}), app=relay.app)
        return False
    except messaging.UnregisteredError:
        return True


def test_google_down_for_30_seconds_everything_arrives_after_once_each(relay):
    device = relay.device("c")
    try:
        relay.google.process.send_signal(signal.SIGTERM)
        relay.google.process.wait(timeout=15)
        stopped = time.time()
        for i in range(5):
            messaging.send(messaging.Message(token=device.token, data={"n": str(i)}), app=relay.app)
        time.sleep(max(0.0, 30 - (time.time() - stopped)))
        relay.start_google()
        got = sorted(int(device.message(timeout=90)["data"]["n"]) for _ in range(5))
        assert got == list(range(5))
        device.nothing(2)
    finally:
        device.stop()


def test_googles_quota_gives_429_and_herald_backs_off_then_delivers(relay):
    device = relay.device("q")
    retries = counter(relay.herald.metrics(), "herald_fcm_hand_offs_total", 'outcome="retry"')
    try:
        relay.google.cli("project", "set", GOOGLE, "device-per-minute=2")
        time.sleep(1.5)
        for i in range(4):
            messaging.send(messaging.Message(token=device.token, data={"n": str(i)}), app=relay.app)
        first = sorted(int(device.message(timeout=20)["data"]["n"]) for _ in range(2))
        wait_for(lambda: counter(relay.herald.metrics(), "herald_fcm_hand_offs_total", 'outcome="retry"') > retries)
        refused_at = time.time()
        # Backed off for at least a minute, not a hot loop against the quota.
        device.nothing(20)
        assert counter(relay.herald.metrics(), "herald_fcm_hand_offs_total", 'outcome="retry"') - retries <= 2
        relay.google.cli("project", "set", GOOGLE, "device-per-minute=240")
        rest = sorted(int(device.message(timeout=120)["data"]["n"]) for _ in range(2))
        assert time.time() - refused_at >= 55
        assert sorted(first + rest) == [0, 1, 2, 3]
    finally:
        device.stop()


def test_a_wrong_key_holds_the_messages_until_it_is_fixed(relay):
    good = relay.google.projects[GOOGLE]["key_file"]
    wrong = os.path.join(relay.herald.directory, "wrong-key.json")
    with open(good) as f:
        key = json.load(f)
    with open(relay.herald.projects[APP]["key_file"]) as f:
        key["private_key"] = json.load(f)["private_key"]
    with open(wrong, "w") as f:
        json.dump(key, f)
    device = relay.device("w")
    try:
        relay.herald.cli("project", "fcm-relay", APP, "--service-account", wrong)
        time.sleep(1.5)
        messaging.send(messaging.Message(token=device.token, data={"held": "1"}), app=relay.app)
        wait_for(lambda: counter(relay.herald.metrics(), "herald_fcm_credential_refusals_total") >= 1)
        device.nothing(6)
        with open(os.path.join(relay.herald.directory, "serve.log")) as f:
            assert f.read().count("fcm refuses the project's relay key") == 1
        relay.herald.cli("project", "fcm-relay", APP, "--service-account", good)
        assert device.message(timeout=30)["data"]["held"] == "1"
    finally:
        relay.herald.cli("project", "fcm-relay", APP, "--service-account", good)
        device.stop()


def test_a_kill_9_of_herald_mid_hand_off_loses_nothing(relay):
    device = relay.device("k")
    try:
        relay.google.process.send_signal(signal.SIGTERM)
        relay.google.process.wait(timeout=15)
        for i in range(3):
            messaging.send(messaging.Message(token=device.token, data={"n": str(i)}), app=relay.app)
        time.sleep(1)
        relay.herald.process.kill()
        relay.herald.process.wait(timeout=10)
        relay.start_google()
        relay.start_herald()
        got = sorted(int(device.message(timeout=90)["data"]["n"]) for _ in range(3))
        assert got == [0, 1, 2]
        device.nothing(2)
    finally:
        device.stop()


def test_a_hand_off_is_never_handed_on_again(relay):
    """A token the second Herald does not know either: it answers UNREGISTERED to a hand-off
    (it carries the hand-off header), even though it may hand off itself."""
    relay.google.cli("project", "fcm-relay", GOOGLE, "--service-account", relay.google.projects[GOOGLE]["key_file"])
    try:
        time.sleep(1.5)
        token = "unknownA:APA91b" + "x" * 140
        messaging.send(messaging.Message(token=token, data={"loop": "1"}), app=relay.app)
        wait_for(lambda: counter(relay.herald.metrics(), "herald_fcm_hand_offs_total", 'outcome="unregistered"') >= 1)
        assert _unregistered(relay, token)
        assert counter(relay.google.metrics(), "herald_fcm_hand_offs_total") == 0
    finally:
        relay.google.cli("project", "fcm-relay", GOOGLE, "--remove")


def test_a_multicast_and_a_legacy_send_are_split_token_by_token(relay):
    google = relay.device("m")
    own = HeraldDevice(relay.herald, APP, os.path.join(relay.herald.directory, "own-m.json"))
    try:
        answer = messaging.send_each_for_multicast(
            messaging.MulticastMessage(tokens=[google.token, own.token], data={"multi": "1"}), app=relay.app)
        assert answer.success_count == 2
        assert google.message(timeout=20)["data"]["multi"] == "1"
        assert own.message()["data"]["multi"] == "1"
        status, body = legacy(relay, {"registration_ids": [google.token, own.token], "data": {"legacy": "1"}})
        assert status == 200 and body["success"] == 2, body
        assert google.message(timeout=20)["data"]["legacy"] == "1"
        assert own.message()["data"]["legacy"] == "1"
    finally:
        google.stop()
        own.stop()


def legacy(relay, body):
    import urllib.error
    import urllib.request
    request = urllib.request.Request(
        f"{relay.herald.url}/fcm/send", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 "Authorization": f"key={relay.herald.projects[APP]['server_key']}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_a_topic_send_with_relay_topics_on_reaches_subscribers_on_both_sides(relay):
    google = relay.device("t")
    own = HeraldDevice(relay.herald, APP, os.path.join(relay.herald.directory, "own-t.json"))
    google_app = herald_sdk.initialize(relay.google.url, relay.google.projects[GOOGLE]["key_file"], name="google")
    try:
        assert messaging.subscribe_to_topic([google.token], "scores", app=google_app).success_count == 1
        assert messaging.subscribe_to_topic([own.token], "scores", app=relay.app).success_count == 1
        # Off by default: Herald's subscribers only.
        messaging.send(messaging.Message(topic="scores", data={"n": "1"}), app=relay.app)
        assert own.message(timeout=20)["data"]["n"] == "1"
        google.nothing(3)
        relay.herald.cli("project", "set", APP, "relay-topics=on")
        time.sleep(1.5)
        messaging.send(messaging.Message(topic="scores", data={"n": "2"}), app=relay.app)
        assert own.message(timeout=20)["data"]["n"] == "2"
        assert google.message(timeout=20)["data"]["n"] == "2"
        google.nothing(2)
        own.nothing(1)
    finally:
        relay.herald.cli("project", "set", APP, "relay-topics=off")
        google.stop()
        own.stop()
