"""The legacy HTTP protocol as its users speak it: pyfcm's legacy client sends through
`/fcm/send` with the server key, and `herald device` receives. Also the legacy web
subscription (`/fcm/connect/subscribe`) that older web receivers make, with fcm-receiver as
the device. Rules: C3 (another project's token), C5 (the server key), L1, T3, M2."""
import json
import urllib.request

import pytest
from firebase_admin import messaging
from pyfcm import FCMNotification
from pyfcm.errors import AuthenticationError, InvalidDataError

import herald_sdk
from conftest import HeraldDevice


def legacy_client(herald, key=None):
    """pyfcm's legacy client, its endpoint set to Herald's."""
    client = FCMNotification(api_key=key or herald.projects["compat-legacy"]["server_key"])
    client.FCM_END_POINT = f"{herald.url}/fcm/send"
    return client


@pytest.fixture
def devices(herald, tmp_path):
    started = [HeraldDevice(herald, "compat-legacy", tmp_path / f"device-{n}.json", app_id="com.example.legacy") for n in range(2)]
    yield started
    for device in started:
        device.stop()


@pytest.fixture
def app(herald):
    return herald_sdk.initialize(herald.url, herald.projects["compat-legacy"]["key_file"], name="legacy")


def test_pyfcm_sends_to_one_token_and_the_device_receives_it(herald, devices):
    first, _ = devices
    answer = legacy_client(herald).single_device_data_message(
        registration_id=first.token, data_message={"via": "legacy", "n": 1}, collapse_key="score")
    assert answer["success"] == 1 and answer["failure"] == 0 and len(answer["multicast_ids"]) == 1
    message = first.message()
    assert message["id"] == answer["results"][0]["message_id"]
    assert message["data"] == {"via": "legacy", "n": "1"}  # legacy data values become strings
    assert message["collapse_key"] == "score"


def test_pyfcm_notification_reaches_the_device_with_its_title_and_body(herald, devices):
    first, _ = devices
    answer = legacy_client(herald).notify_single_device(
        registration_id=first.token, message_title="Legacy", message_body="still alive", data_message={"k": "v"})
    assert answer["success"] == 1
    line = first.line()
    shown = json.loads(line.split(": ", 1)[1] if line.startswith("tray: ") else line)
    fields = shown.get("notification", shown)
    assert fields["title"] == "Legacy" and fields["body"] == "still alive"


def test_pyfcm_sends_to_many_tokens_and_answers_each_in_order(herald, devices, tmp_path):
    first, second = devices
    other = HeraldDevice(herald, "compat-devices", tmp_path / "other-project.json", app_id="com.example.legacy")
    try:
        tokens = [first.token, "not-a-token", second.token, other.token, first.token[:-4] + "AAAA"]
        answer = legacy_client(herald).multiple_devices_data_message(registration_ids=tokens, data_message={"to": "many"})
        errors = [result.get("error") for result in answer["results"]]
        # C3: a token of another project is MismatchSenderId; an unknown one NotRegistered.
        assert errors == [None, "InvalidRegistration", None, "MismatchSenderId", "NotRegistered"]
        assert answer["success"] == 2 and answer["failure"] == 3
        assert first.message()["data"] == {"to": "many"}
        assert second.message()["data"] == {"to": "many"}
        other.nothing()
    finally:
        other.stop()


def test_pyfcm_sends_to_a_topic_and_a_condition(herald, devices, app):
    first, second = devices
    messaging.subscribe_to_topic([first.token, second.token], "legacy-news", app=app)
    messaging.subscribe_to_topic([second.token], "legacy-sport", app=app)
    client = legacy_client(herald)
    answer = client.topic_subscribers_data_message(topic_name="legacy-news", data_message={"via": "topic"})
    assert answer["success"] == 1 and isinstance(answer["topic_message_id"], int)
    assert first.message()["data"] == {"via": "topic"}
    assert second.message()["data"] == {"via": "topic"}
    answer = client.topic_subscribers_data_message(
        condition="'legacy-news' in topics && 'legacy-sport' in topics", data_message={"via": "condition"})
    assert answer["success"] == 1
    assert second.message()["data"] == {"via": "condition"}
    first.nothing()


def test_pyfcm_dry_run_is_answered_and_delivers_nothing(herald, devices):
    first, _ = devices
    answer = legacy_client(herald).single_device_data_message(
        registration_id=first.token, data_message={"dry": "run"}, dry_run=True)
    assert answer["success"] == 1 and answer["results"][0]["message_id"] == "fake_message_id"
    first.nothing()


def test_pyfcm_with_a_wrong_key_is_refused_and_a_client_key_is_not_a_server_key(herald, devices):
    first, _ = devices
    with pytest.raises(AuthenticationError):
        legacy_client(herald, key="AAAA-not-a-server-key").single_device_data_message(
            registration_id=first.token, data_message={"k": "v"})
    # C5: the project's client-side API key is not a server key.
    with pytest.raises(AuthenticationError):
        legacy_client(herald, key=herald.projects["compat-legacy"]["api_key"]).single_device_data_message(
            registration_id=first.token, data_message={"k": "v"})
    first.nothing()


def test_pyfcm_gets_the_reason_of_a_malformed_request(herald):
    client = legacy_client(herald)
    with pytest.raises(InvalidDataError, match="time_to_live"):
        client.send_request([client.json_dumps({"to": "/topics/x", "time_to_live": "soon"})], 5)
        client.parse_responses()


def post_form(url, fields, headers=None):
    request = urllib.request.Request(
        url, data=urllib.parse.urlencode(fields).encode(), method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


def test_the_plain_text_form_sends_to_one_token(herald, devices):
    first, _ = devices
    key = herald.projects["compat-legacy"]["server_key"]
    answer = post_form(
        f"{herald.url}/gcm/send", {"registration_id": first.token, "data.form": "plain", "collapse_key": "f"},
        headers={"Authorization": f"key={key}"})
    assert answer.startswith("id=0:")
    assert first.message()["data"] == {"form": "plain"}
    answer = post_form(
        f"{herald.url}/gcm/send", {"registration_id": first.token[:-4] + "AAAA", "data.form": "plain"},
        headers={"Authorization": f"key={key}"})
    assert answer.strip() == "Error=NotRegistered"


def test_an_older_web_receiver_subscribes_through_connect_subscribe_and_receives(herald):
    """fcm-receiver as the browser; its FCM registration replaced by the legacy form that
    older web receivers post (`authorized_entity`, `endpoint`, `encryption_key`, `encryption_auth`)."""
    from fcm_receiver import fcm_client
    from fcm_receiver.crypto_utils import b64url_no_pad, public_key_bytes_uncompressed
    from test_real_clients import Receiver

    project = herald.projects["compat-legacy"]
    subscribed = {}

    def subscribe(api_key, project_id, gcm_token, p256dh_public_key_b64url, auth_secret_b64url, **_):
        answer = json.loads(post_form(f"{herald.url}/fcm/connect/subscribe", {
            "authorized_entity": project["number"], "endpoint": f"https://fcm.googleapis.com/fcm/send/{gcm_token}",
            "encryption_key": p256dh_public_key_b64url, "encryption_auth": auth_secret_b64url,
        }))
        subscribed.update(answer)
        return answer["token"]

    original = (fcm_client.send_fcm_install_request, fcm_client.send_fcm_register_request)
    fcm_client.send_fcm_install_request = lambda *args, **kwargs: "no installation"
    fcm_client.send_fcm_register_request = subscribe
    try:
        receiver = Receiver(herald, project)
        token, _, _, _ = receiver.client.register()
    finally:
        fcm_client.send_fcm_install_request, fcm_client.send_fcm_register_request = original
    assert token == subscribed["token"] and subscribed["pushSet"]
    receiver.client.start_listening()
    try:
        answer = legacy_client(herald).single_device_data_message(registration_id=token, data_message={"web": "legacy"})
        assert answer["success"] == 1
        # A reconnect of the receiver under load can cost it several seconds.
        assert receiver.message(seconds=30)["data"] == {"web": "legacy"}
    finally:
        receiver.client.close()
    # The form must name a push channel of this server.
    with pytest.raises(urllib.error.HTTPError) as refused:
        post_form(f"{herald.url}/fcm/connect/subscribe", {
            "authorized_entity": project["number"], "endpoint": "https://fcm.googleapis.com/fcm/send/unknown",
            "encryption_key": b64url_no_pad(public_key_bytes_uncompressed(receiver.client.public_key)),
            "encryption_auth": b64url_no_pad(b"0123456789abcdef"),
        })
    assert refused.value.code == 400
