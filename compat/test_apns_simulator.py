"""The APNs simulator checked with a real APNs client (aioapns, which servers use against
Apple): it must accept what APNs accepts and refuse, with APNs' status and reason, what
APNs refuses, so that Herald's hand-off tested against it is tested against APNs' rules."""
import asyncio
import ssl
import time
import urllib.request
import uuid

import jwt
import pytest
from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection as apns_connection

from apns_simulator import APNsSimulator, make_p8

TEAM = "TEAM123456"
KEY_ID = "KEY1234567"
BUNDLE = "com.example.ios"


@pytest.fixture(scope="module")
def simulator():
    apns = APNsSimulator()
    yield apns
    apns.close()


@pytest.fixture(scope="module")
def key(simulator):
    pem = make_p8()
    simulator.set_keys({KEY_ID: (TEAM, pem)})
    return pem


def client(simulator, key, key_id=KEY_ID, team=TEAM):
    apns_connection.APNsProductionClientProtocol.APNS_SERVER = "127.0.0.1"
    apns_connection.APNsProductionClientProtocol.APNS_PORT = simulator.port
    return APNs(key=key, key_id=key_id, team_id=team, topic=BUNDLE, use_sandbox=False,
                ssl_context=ssl.create_default_context(cafile=simulator.ca_file))


def send(simulator, key, request, **credentials):
    async def run():
        return await client(simulator, key, **credentials).send_notification(request)
    return asyncio.run(run())


def test_a_notification_is_accepted_with_its_headers_and_payload_as_sent(simulator, key):
    token = simulator.add_device(BUNDLE)
    apns_id = str(uuid.uuid4())
    result = send(simulator, key, NotificationRequest(
        device_token=token, notification_id=apns_id, priority=10, collapse_key="scores",
        push_type=PushType.ALERT, time_to_live=3600,
        message={"aps": {"alert": {"title": "Hi", "body": "there"}}, "k": "v"}))
    assert result.is_successful and result.notification_id == apns_id
    received = simulator.accepted()[-1]
    assert received["token"] == token and received["apns_id"] == apns_id
    assert received["payload"] == {"aps": {"alert": {"title": "Hi", "body": "there"}}, "k": "v"}
    headers = received["headers"]
    assert headers["apns-topic"] == BUNDLE and headers["apns-push-type"] == "alert"
    assert headers["apns-priority"] == "10" and headers["apns-collapse-id"] == "scores"
    assert int(headers["apns-expiration"]) > time.time()
    assert jwt.get_unverified_header(received["jwt"])["kid"] == KEY_ID


@pytest.mark.parametrize("change, status, reason", [
    (dict(device_token="ab" * 32), "400", "BadDeviceToken"),
    (dict(device_token="not-hex"), "400", "BadDeviceToken"),
    (dict(apns_topic="com.example.other"), "400", "DeviceTokenNotForTopic"),
    (dict(priority=7), "400", "BadPriority"),
    (dict(push_type=PushType.BACKGROUND, priority=10), "400", "BadPriority"),
    (dict(collapse_key="c" * 65), "400", "BadCollapseId"),
    (dict(message={"aps": {"alert": "x" * 5000}}), "413", "PayloadTooLarge"),
])
def test_what_apns_refuses_is_refused_with_its_status_and_reason(simulator, key, change, status, reason):
    request = dict(device_token=simulator.add_device(BUNDLE), message={"aps": {"alert": "x"}},
                   push_type=PushType.ALERT)
    request.update(change)
    result = send(simulator, key, NotificationRequest(**request))
    assert (result.status, result.description) == (status, reason)


def test_an_unregistered_device_answers_410_with_the_time_it_went(simulator, key):
    token = simulator.add_device(BUNDLE)
    simulator.unregister(token)
    result = send(simulator, key, NotificationRequest(device_token=token, message={"aps": {"alert": "x"}}))
    assert (result.status, result.description) == ("410", "Unregistered")
    assert abs(result.timestamp - time.time() * 1000) < 60_000


def test_provider_tokens_of_an_unknown_key_or_team_are_invalid(simulator, key):
    token = simulator.add_device(BUNDLE)
    request = NotificationRequest(device_token=token, message={"aps": {"alert": "x"}})
    assert send(simulator, make_p8(), request).description == "InvalidProviderToken"  # wrong signature
    request = NotificationRequest(device_token=token, message={"aps": {"alert": "x"}})
    assert send(simulator, key, request, team="OTHERTEAM1").description == "InvalidProviderToken"
    request = NotificationRequest(device_token=token, message={"aps": {"alert": "x"}})
    assert send(simulator, key, request, key_id="UNKNOWNKEY").description == "InvalidProviderToken"


def test_an_old_provider_token_is_expired_and_one_renewed_too_soon_is_refused(simulator, key):
    from apns_simulator import Refusal
    connection = {}
    simulator.check_provider_token(f"bearer {provider_token(key, time.time() - 60)}", connection)
    with pytest.raises(Refusal) as expired:
        simulator.check_provider_token(f"bearer {provider_token(key, time.time() - 3700)}", {})
    assert (expired.value.status, expired.value.reason) == (403, "ExpiredProviderToken")
    # The same connection with another token a minute later: renewed too soon.
    with pytest.raises(Refusal) as too_soon:
        simulator.check_provider_token(f"bearer {provider_token(key, time.time() - 30)}", connection)
    assert (too_soon.value.status, too_soon.value.reason) == (429, "TooManyProviderTokenUpdates")
    with pytest.raises(Refusal) as missing:
        simulator.check_provider_token(None, {})
    assert missing.value.reason == "MissingProviderToken"


def provider_token(key, issued_at):
    return jwt.encode({"iss": TEAM, "iat": int(issued_at)}, key, algorithm="ES256", headers={"kid": KEY_ID})


def test_only_http2_is_spoken(simulator):
    context = ssl.create_default_context(cafile=simulator.ca_file)
    context.set_alpn_protocols(["http/1.1"])
    with pytest.raises(Exception):
        urllib.request.urlopen(urllib.request.Request(
            f"https://127.0.0.1:{simulator.port}/3/device/{'a' * 64}", data=b"{}", method="POST"),
            context=context, timeout=5)


def test_while_down_nothing_connects_and_after_it_accepts_again(simulator, key):
    token = simulator.add_device(BUNDLE)
    simulator.go_down()
    try:
        with pytest.raises(Exception):
            send(simulator, key, NotificationRequest(device_token=token, message={"aps": {"alert": "x"}}))
    finally:
        simulator.come_up()
    assert send(simulator, key, NotificationRequest(device_token=token, message={"aps": {"alert": "y"}})).is_successful
