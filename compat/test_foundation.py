"""firebase-admin 7.7.0 against a live Herald: token exchange, dry runs and FCM errors.

Rules: C1 (project in the URL), C4 (access tokens from the JWT-bearer grant), M2, M3, D5, L1.
"""
import datetime
import re

import google.auth.credentials
import pytest
from firebase_admin import exceptions, messaging

import herald_sdk


def alpha(herald):
    return herald_sdk.initialize(herald.url, herald.projects["compat-alpha"]["key_file"], name="alpha")


def test_C4_key_file_token_exchange_and_L1_topic_send_returns_a_name(herald):
    app = alpha(herald)
    name = messaging.send(messaging.Message(topic="news", data={"k": "v"}), app=app)
    assert re.fullmatch(r"projects/compat-alpha/messages/0:\d+%[0-9a-f]{16}", name), name
    assert re.search(r'herald_access_tokens_issued_total\{project="compat-alpha"\} [1-9]', herald.metrics())


def test_dry_run_to_topic_and_condition_answers_a_name(herald):
    app = alpha(herald)
    for message in (
        messaging.Message(topic="news", notification=messaging.Notification(title="t", body="b")),
        messaging.Message(condition="'a' in topics && ('b' in topics || 'c' in topics)", data={"x": "1"}),
    ):
        assert messaging.send(message, dry_run=True, app=app) == "projects/compat-alpha/messages/fake_message_id"


def test_dry_run_to_a_token_no_device_holds_is_unregistered(herald):
    app = alpha(herald)
    with pytest.raises(messaging.UnregisteredError):
        messaging.send(messaging.Message(token="bm8tZGV2aWNl:APA91bNoDeviceHasThisToken", data={"a": "b"}), dry_run=True, app=app)


def test_M3_reserved_data_key_is_invalid_argument(herald):
    app = alpha(herald)
    for key in ("from", "google.sent_time", "gcm.x", "message_type"):
        with pytest.raises(exceptions.InvalidArgumentError):
            messaging.send(messaging.Message(topic="news", data={key: "v"}), dry_run=True, app=app)


def test_M2_five_thousand_byte_payload_is_invalid_argument(herald):
    app = alpha(herald)
    with pytest.raises(exceptions.InvalidArgumentError) as raised:
        messaging.send(messaging.Message(condition="'a' in topics", data={"big": "x" * 5000}), app=app)
    assert "bytes" in str(raised.value)


def test_D5_ttl_over_28_days_is_invalid_argument(herald):
    app = alpha(herald)
    config = messaging.AndroidConfig(ttl=datetime.timedelta(days=29))
    with pytest.raises(exceptions.InvalidArgumentError):
        messaging.send(messaging.Message(topic="news", android=config), app=app)


def test_C1_credentials_of_one_project_on_another_are_permission_denied(herald):
    app = herald_sdk.initialize(
        herald.url, herald.projects["compat-alpha"]["key_file"], name="cross", project_id="compat-beta"
    )
    with pytest.raises(exceptions.PermissionDeniedError):
        messaging.send(messaging.Message(topic="news"), dry_run=True, app=app)


class ForgedCredentials(google.auth.credentials.Credentials):
    """Credentials that present a token Herald never issued, even after a refresh."""

    def refresh(self, request):
        self.token = "ya29.forged-token"
        self.expiry = datetime.datetime.utcnow() + datetime.timedelta(hours=1)


def test_C4_forged_token_is_unauthenticated(herald):
    app = herald_sdk.initialize(herald.url, credential=ForgedCredentials(), name="forged", project_id="compat-alpha")
    with pytest.raises(exceptions.UnauthenticatedError):
        messaging.send(messaging.Message(topic="news"), dry_run=True, app=app)


def test_C4_revoked_key_stops_working_while_the_server_runs(herald):
    import time

    from google.auth.exceptions import RefreshError

    beta = herald.projects["compat-beta"]
    app = herald_sdk.initialize(herald.url, beta["key_file"], name="beta-before")
    assert messaging.send(messaging.Message(topic="t"), dry_run=True, app=app).endswith("fake_message_id")
    herald.cli("project", "rotate-key", "compat-beta", "--revoke", beta["key_id"], "--revoke-only")
    time.sleep(1.5)  # the server reloads credentials once a second
    # The access token minted with the revoked key is refused; refreshing it is refused too.
    with pytest.raises((exceptions.UnauthenticatedError, RefreshError)):
        messaging.send(messaging.Message(topic="t"), dry_run=True, app=app)


def test_L1_an_accepted_message_survives_kill_9(tmp_path):
    """A message answered with a name is durable: SIGKILL right after the answer loses nothing."""
    import os
    import signal
    import sqlite3

    from conftest import HeraldServer

    server = HeraldServer()
    try:
        project = server.create_project("durable-project")
        server.start()
        app = herald_sdk.initialize(server.url, project["key_file"], name="durable")
        names = [messaging.send(messaging.Message(topic="news", data={"n": str(i)}), app=app) for i in range(20)]
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
        with sqlite3.connect(os.path.join(server.data_dir, "herald.sqlite")) as db:
            stored = {row[0] for row in db.execute("SELECT id FROM messages WHERE project_id = 'durable-project'")}
        assert {name.rsplit("/", 1)[1] for name in names} <= stored
    finally:
        server.stop()
