"""Devices against a live Herald: the independent firebase-messaging receiver (0.4.5,
unmodified but for its endpoint attributes and trust store) and `herald device`, with
messages sent by firebase-admin. Rules: L1, L2, L4, C2, M6 (TLS)."""
import asyncio
import json
import subprocess

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HERALD


@pytest.fixture
def devices_app(herald):
    return herald_sdk.initialize(herald.url, herald.projects["compat-devices"]["key_file"], name="devices")


def receiver(herald, credentials=None):
    from firebase_messaging import FcmPushClient, FcmRegisterConfig

    herald_sdk.redirect_receiver(herald.url, herald.gateway_port, herald.ca_file)
    project = herald.projects["compat-devices"]
    config = FcmRegisterConfig(
        project_id=project["id"],
        app_id=f"1:{project['number']}:web:compat",
        api_key=project["api_key"],
        messaging_sender_id=project["number"],
    )
    received = []
    client = FcmPushClient(lambda message, persistent_id, _: received.append((message, persistent_id)), config, credentials)
    return client, received


async def wait_for(condition, seconds=10):
    for _ in range(int(seconds * 20)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return False


def test_L2_firebase_messaging_receives_and_decrypts_a_message_sent_with_firebase_admin(herald, devices_app):
    async def scenario():
        client, received = receiver(herald)
        token = await client.checkin_or_register()
        await client.start()
        assert await wait_for(client.is_started)
        name = messaging.send(
            messaging.Message(
                token=token,
                data={"order": "42", "status": "shipped"},
                notification=messaging.Notification(title="Your order", body="is on its way"),
            ),
            app=devices_app,
        )
        assert await wait_for(lambda: received)
        await client.stop()
        return name, received

    name, received = asyncio.run(scenario())
    message, persistent_id = received[0]
    message_id = name.rsplit("/", 1)[1]
    assert persistent_id == message_id
    assert message["fcmMessageId"] == message_id
    assert message["data"] == {"order": "42", "status": "shipped"}
    assert message["notification"] == {"title": "Your order", "body": "is on its way"}
    assert message["from"] == herald.projects["compat-devices"]["number"]


def test_L4_a_message_sent_while_the_receiver_is_stopped_arrives_when_it_starts_again(herald, devices_app):
    async def scenario():
        client, _ = receiver(herald)
        token = await client.checkin_or_register()
        credentials = client.credentials
        name = messaging.send(messaging.Message(token=token, data={"while": "offline"}), app=devices_app)
        client, received = receiver(herald, credentials)
        assert await client.checkin_or_register() == token
        await client.start()
        assert await wait_for(lambda: received)
        await client.stop()
        return name, received

    name, received = asyncio.run(scenario())
    assert [persistent_id for _, persistent_id in received] == [name.rsplit("/", 1)[1]]
    assert received[0][0]["data"] == {"while": "offline"}


def test_dry_run_to_a_registered_token_answers_a_name(herald, devices_app):
    async def register():
        client, _ = receiver(herald)
        return await client.checkin_or_register()

    token = asyncio.run(register())
    name = messaging.send(messaging.Message(token=token, data={"a": "b"}), dry_run=True, app=devices_app)
    assert name == "projects/compat-devices/messages/fake_message_id"


def test_herald_device_prints_its_token_and_each_message(herald, devices_app, tmp_path):
    project = herald.projects["compat-devices"]
    device = subprocess.Popen(
        [
            HERALD, "device", "--server", herald.url, "--project", project["id"], "--api-key", project["api_key"],
            "--app-id", "com.example.compat", "--gateway", f"127.0.0.1:{herald.gateway_port}",
            "--ca", herald.ca_file, "--identity", str(tmp_path / "device.json"),
        ],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        first = device.stdout.readline()
        assert first.startswith("token: ")
        token = first.split(": ", 1)[1].strip()
        name = messaging.send(
            messaging.Message(token=token, data={"k": "v"}, android=messaging.AndroidConfig(collapse_key="ck")),
            app=devices_app,
        )
        line = json.loads(device.stdout.readline())
        assert line["id"] == name.rsplit("/", 1)[1]
        assert line["data"] == {"k": "v"}
        assert line["collapse_key"] == "ck"
        assert line["from"] == project["number"]
    finally:
        device.terminate()
        assert device.wait(timeout=10) == 0
