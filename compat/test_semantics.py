"""Delivery rules seen from outside: firebase-admin sends, `herald device` receives.
Rules: D1 (too many pending), D2 (collapsing), D6 (TTL 0), L6 (uninstall)."""
import time

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HeraldDevice


def Device(herald, identity, *flags):
    """A `herald device` of the project whose max-pending is 3."""
    return HeraldDevice(herald, "compat-semantics", identity, *flags)


@pytest.fixture
def app(herald):
    return herald_sdk.initialize(herald.url, herald.projects["compat-semantics"]["key_file"], name="semantics")


def send(app, token, **fields):
    return messaging.send(messaging.Message(token=token, **fields), app=app).rsplit("/", 1)[1]


def test_D1_after_too_many_pending_messages_the_device_first_hears_they_were_deleted(herald, app, tmp_path):
    device = Device(herald, tmp_path / "d1.json")
    token = device.token
    device.stop()
    for n in range(4):  # max-pending is 3 for this project
        send(app, token, data={"n": str(n)})
    marker = send(app, token, data={"marker": "yes"})
    device = Device(herald, tmp_path / "d1.json")
    try:
        assert device.line() == "deleted: 4"
        assert device.message()["id"] == marker
    finally:
        device.stop()


def test_D2_a_newer_message_with_the_same_collapse_key_replaces_the_undelivered_one(herald, app, tmp_path):
    device = Device(herald, tmp_path / "d2.json")
    token = device.token
    device.stop()
    send(app, token, data={"score": "1-0"}, android=messaging.AndroidConfig(collapse_key="match"))
    latest = send(app, token, data={"score": "2-0"}, android=messaging.AndroidConfig(collapse_key="match"))
    device = Device(herald, tmp_path / "d2.json")
    try:
        first = device.message()
        assert first["id"] == latest
        assert first["data"] == {"score": "2-0"}
        marker = send(app, token, data={"marker": "yes"})
        assert device.message()["id"] == marker
    finally:
        device.stop()


def test_D6_a_ttl_zero_message_is_delivered_now_or_never(herald, app, tmp_path):
    device = Device(herald, tmp_path / "d6.json")
    token = device.token
    device.stop()
    send(app, token, data={"when": "offline"}, android=messaging.AndroidConfig(ttl=0))
    device = Device(herald, tmp_path / "d6.json")
    try:
        time.sleep(0.5)  # connected
        online = send(app, token, data={"when": "online"}, android=messaging.AndroidConfig(ttl=0))
        assert device.message()["id"] == online
    finally:
        device.stop()


def test_L6_after_uninstall_every_send_is_unregistered(herald, app, tmp_path):
    device = Device(herald, tmp_path / "l6.json")
    token = device.token
    device.command("uninstall")
    assert device.line() == "uninstalled"
    assert device.process.wait(timeout=10) == 0
    with pytest.raises(messaging.UnregisteredError):
        send(app, token, data={"after": "uninstall"})


def test_L7_herald_stats_reports_what_was_accepted_and_delivered(herald, app, tmp_path):
    device = Device(herald, tmp_path / "l7.json")
    try:
        name = send(app, device.token, data={"counted": "yes"}, fcm_options=messaging.FCMOptions(analytics_label="stats"))
        assert device.message()["id"] == name
        marker = send(app, device.token, data={"marker": "yes"})
        assert device.message()["id"] == marker  # the first one is acknowledged by now
    finally:
        device.stop()
    lines = herald.cli("stats", "compat-semantics", "--app", "com.example.semantics").splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[1:]]
    labelled = [row for row in rows if row["label"] == "stats"]
    assert len(labelled) == 1
    assert labelled[0]["accepted"] == "1"
    assert labelled[0]["delivered"] == "1"
