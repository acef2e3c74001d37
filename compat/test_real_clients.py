"""Clients nobody here wrote, as they are: the official firebase-admin SDK's calls with
malformed and unknown tokens (as its own integration tests make them), and the independent
`fcm-receiver` device client (its own protobuf code) registering, subscribing to a topic
over register3, receiving, and unsubscribing. Also: a project, key or device made while the
server runs works on its first request (no wait for the once-a-second reload).
Rules: C1 (credentials), T2 (topic operations), L2 (delivery)."""
import asyncio
import queue
import re
import subprocess

import pytest
from firebase_admin import exceptions, messaging

import herald_sdk
from conftest import HERALD

# Well-formed but held by no app instance: UNREGISTERED. The first is the SDK's own test token.
UNKNOWN = [
    "fGw0qy4TGgk:APA91bGtWGjuhp4WRhHXgbabIYp1jxEKI08ofj_v1bKhWAGJQ4e3arRCWzeTfHaLz83mBnDh0aPWB1AykXAVUUGl2h1wT4X",
    "APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx",
]
# Not a registration token at all: INVALID_ARGUMENT.
MALFORMED = ["not-a-token", "also-not-a-token", "INVALID_TOKEN", "x:APA91b", "token with spaces:APA91bx"]
NAME = re.compile(r"^projects/.*/messages/.*$")


@pytest.fixture
def app(herald):
    return herald_sdk.initialize(herald.url, herald.projects["compat-alpha"]["key_file"], name="real-clients")


@pytest.fixture
def loop():
    """An event loop for the async calls, left open: deleting the app afterwards closes its
    async client on it."""
    return asyncio.new_event_loop()


@pytest.mark.parametrize("dry_run", [True, False])
def test_send_raises_invalid_argument_for_a_malformed_token_and_unregistered_for_an_unknown_one(app, dry_run):
    for token in MALFORMED:
        with pytest.raises(exceptions.InvalidArgumentError):
            messaging.send(messaging.Message(token=token, notification=messaging.Notification("t", "b")),
                           dry_run=dry_run, app=app)
    for token in UNKNOWN:
        with pytest.raises(messaging.UnregisteredError):
            messaging.send(messaging.Message(token=token, notification=messaging.Notification("t", "b")),
                           dry_run=dry_run, app=app)


def check_batch(batch, topics):
    assert batch.success_count == topics
    assert batch.failure_count == len(MALFORMED) + len(UNKNOWN)
    for response in batch.responses[:topics]:
        assert response.success and NAME.match(response.message_id)
    for response in batch.responses[topics:topics + len(MALFORMED)]:
        assert isinstance(response.exception, exceptions.InvalidArgumentError) and response.message_id is None
    for response in batch.responses[topics + len(MALFORMED):]:
        assert isinstance(response.exception, messaging.UnregisteredError) and response.message_id is None


def batch_messages():
    return ([messaging.Message(topic="foo-bar", notification=messaging.Notification("Title", "Body"))] * 2
            + [messaging.Message(token=t, notification=messaging.Notification("Title", "Body"))
               for t in MALFORMED + UNKNOWN])


@pytest.mark.parametrize("dry_run", [True, False])
def test_send_each_and_send_each_async_sort_malformed_from_unknown_tokens(app, loop, dry_run):
    check_batch(messaging.send_each(batch_messages(), dry_run=dry_run, app=app), topics=2)
    check_batch(loop.run_until_complete(messaging.send_each_async(batch_messages(), dry_run=dry_run, app=app)),
                topics=2)


@pytest.mark.parametrize("dry_run", [True, False])
def test_send_each_for_multicast_sorts_malformed_from_unknown_tokens(app, loop, dry_run):
    multicast = messaging.MulticastMessage(notification=messaging.Notification("Title", "Body"),
                                           tokens=MALFORMED + UNKNOWN)
    check_batch(messaging.send_each_for_multicast(multicast, dry_run=dry_run, app=app), topics=0)
    check_batch(loop.run_until_complete(messaging.send_each_for_multicast_async(multicast, dry_run=dry_run, app=app)),
                topics=0)


def test_topic_apis_refuse_a_malformed_token_per_token(app):
    response = messaging.subscribe_to_topic_legacy(["not-a-token", UNKNOWN[0]], "news", app=app)
    assert response.failure_count == 2
    assert [e.reason for e in response.errors] == ["INVALID_ARGUMENT", "NOT_FOUND"]
    response = messaging.subscribe_to_topic(["not-a-token"], "news", app=app)
    assert response.failure_count == 1


# fcm-receiver (PyPI), an independent client with its own protobuf code.

class Receiver:
    """An fcm-receiver client pointed at Herald: its endpoints are module attributes of
    fcm_receiver.http_client, its MCS connection the dial_fcm it imports into fcm_client."""

    def __init__(self, herald, project):
        import ssl
        import socket

        from fcm_receiver import fcm_client, http_client

        base = herald.url
        http_client.CHECKIN_URL = f"{base}/checkin"
        http_client.REGISTER_URL = f"{base}/c2dm/register3"
        http_client.FIREBASE_INSTALLATION = f"{base}/v1/"
        http_client.FIREBASE_REGISTRATION = f"{base}/v1/"

        def dial():
            context = ssl.create_default_context(cafile=herald.ca_file)
            raw = socket.create_connection(("127.0.0.1", herald.gateway_port))
            return context.wrap_socket(raw, server_hostname="127.0.0.1")

        fcm_client.dial_fcm = dial
        self.client = fcm_client.FCMClient()
        self.client.api_key = project["api_key"]
        self.client.project_id = project["id"]
        self.client.app_id = f"1:{project['number']}:web:fcm-receiver"
        self.client.create_new_keys()
        self.received = queue.Queue()
        self.client.on_notification_message = lambda message, _: self.received.put(message["payload"])
        self.client.on_data_message = lambda data, _: self.received.put(data)

    def message(self, seconds=10):
        return self.received.get(timeout=seconds)

    def nothing(self, seconds=1.5):
        with pytest.raises(queue.Empty):
            self.received.get(timeout=seconds)


def test_fcm_receiver_subscribes_over_register3_receives_the_topic_and_keeps_its_token(herald, app):
    receiver = Receiver(herald, herald.projects["compat-alpha"])
    token, _, _, _ = receiver.client.register()
    receiver.client.start_listening()
    try:
        subscribed = receiver.client.subscribe_to_topic("receiver-news")
        assert subscribed["token"] == token  # the same token, not a new one
        info = herald_sdk.iid_info(herald.url, token, app)
        assert "receiver-news" in info["rel"]["topics"]

        messaging.send(messaging.Message(topic="receiver-news", data={"via": "topic"}), app=app)
        assert receiver.message()["data"] == {"via": "topic"}

        receiver.client.unsubscribe_from_topic("receiver-news")
        assert "receiver-news" not in herald_sdk.iid_info(herald.url, token, app).get("rel", {}).get("topics", {})
        messaging.send(messaging.Message(topic="receiver-news", data={"via": "topic-after"}), app=app)
        receiver.nothing()
        # Unsubscribing removed the topic only: the token still receives.
        messaging.send(messaging.Message(token=token, data={"via": "token"}), app=app)
        assert receiver.message()["data"] == {"via": "token"}
    finally:
        receiver.client.close()


# Projects and keys made while the server runs.

def test_a_project_created_while_the_server_runs_registers_and_sends_at_once(herald):
    project = herald.create_project("compat-fresh")  # the server is running
    receiver = Receiver(herald, project)
    token, _, _, _ = receiver.client.register()  # installations and registrations with the new API key
    receiver.client.start_listening()
    try:
        fresh = herald_sdk.initialize(herald.url, project["key_file"], name="fresh")
        messaging.send(messaging.Message(token=token, data={"fresh": "1"}), app=fresh)
        assert receiver.message()["data"] == {"fresh": "1"}

        output = subprocess.run(
            [HERALD, "project", "rotate-key", "compat-fresh", "--data-dir", herald.data_dir, "--public-url",
             herald.url, "--key-dir", herald.directory],
            capture_output=True, text=True, timeout=60, check=True).stdout
        key_file = next(line.split(":", 1)[1].strip() for line in output.splitlines() if line.startswith("key file"))
        rotated = herald_sdk.initialize(herald.url, key_file, name="fresh-rotated")
        assert NAME.match(messaging.send(messaging.Message(token=token), dry_run=True, app=rotated))
    finally:
        receiver.client.close()
