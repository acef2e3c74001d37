"""Topics, conditions, multicast and device groups through firebase-admin 7.7.0, received
by `herald device` and firebase-messaging. Rules: T3 (fanout), D3, C3."""
import asyncio

import pytest
from firebase_admin import messaging

import herald_sdk
from test_devices import receiver, wait_for
from test_semantics import Device


@pytest.fixture
def app(herald):
    return herald_sdk.initialize(herald.url, herald.projects["compat-semantics"]["key_file"], name="topics")


def test_subscribe_with_the_v1_resource_and_receive_a_topic_message(herald, app, tmp_path):
    device = Device(herald, tmp_path / "t1.json")
    try:
        response = messaging.subscribe_to_topic([device.token, "not-a-registered-token"], "news", app=app)
        assert response.success_count == 1
        assert response.failure_count == 1
        assert response.errors[0].index == 1
        # Subscribing again is not an error (ALREADY_EXISTS counts as success).
        assert messaging.subscribe_to_topic([device.token], "news", app=app).success_count == 1
        name = messaging.send(messaging.Message(topic="news", data={"headline": "hi"}), app=app)
        line = device.message()
        assert line["id"] == name.rsplit("/", 1)[1]
        assert line["data"] == {"headline": "hi"}
        response = messaging.unsubscribe_from_topic([device.token], "news", app=app)
        assert response.success_count == 1
        messaging.send(messaging.Message(topic="news", data={"headline": "missed"}), app=app)
        marker = messaging.send(messaging.Message(token=device.token, data={"marker": "yes"}), app=app)
        assert device.message()["id"] == marker.rsplit("/", 1)[1]
    finally:
        device.stop()


def test_legacy_instance_id_paths_and_a_condition_reach_each_device_once(herald, app, tmp_path):
    a = Device(herald, tmp_path / "a.json")
    b = Device(herald, tmp_path / "b.json")
    try:
        assert messaging.subscribe_to_topic_legacy([a.token, b.token], "sports", app=app).success_count == 2
        assert messaging.subscribe_to_topic_legacy([a.token], "weather", app=app).success_count == 1
        # a matches both terms, b one: each receives it once.
        condition = "'sports' in topics || 'weather' in topics"
        name = messaging.send(messaging.Message(condition=condition, data={"c": "1"}), app=app)
        for device in (a, b):
            assert device.message()["id"] == name.rsplit("/", 1)[1]
        only_a = messaging.send(
            messaging.Message(condition="'sports' in topics && 'weather' in topics", data={"c": "2"}), app=app)
        assert a.message()["id"] == only_a.rsplit("/", 1)[1]
        marker = messaging.send(messaging.Message(token=b.token, data={"marker": "b"}), app=app)
        assert b.message()["id"] == marker.rsplit("/", 1)[1]
        assert messaging.unsubscribe_from_topic_legacy([a.token, b.token], "sports", app=app).success_count == 2
    finally:
        a.stop()
        b.stop()


def test_send_each_for_multicast_reaches_every_token(herald, app, tmp_path):
    devices = [Device(herald, tmp_path / f"m{i}.json") for i in range(3)]
    try:
        response = messaging.send_each_for_multicast(
            messaging.MulticastMessage(tokens=[d.token for d in devices] + ["dW5rbm93bg:APA91bUnknownToken"], data={"m": "1"}), app=app)
        assert response.success_count == 3
        assert isinstance(response.responses[3].exception, messaging.UnregisteredError)
        for device, result in zip(devices, response.responses):
            assert device.message()["id"] == result.message_id.rsplit("/", 1)[1]
    finally:
        for device in devices:
            device.stop()


def test_firebase_messaging_receives_a_topic_message(herald, tmp_path):
    devices_app = herald_sdk.initialize(herald.url, herald.projects["compat-devices"]["key_file"], name="fm-topics")

    async def scenario():
        client, received = receiver(herald)
        token = await client.checkin_or_register()
        assert messaging.subscribe_to_topic([token], "web-news", app=devices_app).success_count == 1
        await client.start()
        assert await wait_for(client.is_started)
        name = messaging.send(messaging.Message(topic="web-news", data={"via": "topic"}), app=devices_app)
        assert await wait_for(lambda: received)
        await client.stop()
        return name, received

    name, received = asyncio.run(scenario())
    assert received[0][0]["data"] == {"via": "topic"}
    assert received[0][0]["fcmMessageId"] == name.rsplit("/", 1)[1]
