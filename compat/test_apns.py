"""Apple app instances reached through APNs, against the strict APNs simulator: tokens from
`/iid/v1:batchImport` and from the iOS SDK's registration, the hand-off firebase-admin's
sends become (exactly the request FCM would make), unregistering on 410, credential errors
that hold messages back without a hot loop, APNs down, and `kill -9` mid-hand-off."""
import json
import os
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from firebase_admin import messaging

import herald_sdk
from apns_simulator import APNsSimulator, make_p8
from conftest import HERALD, HeraldServer, wait_for

TEAM = "TEAM123456"
KEY_ID = "KEY1234567"
BUNDLE = "com.example.ios"
PROJECT = "apns-handoff"


def post(url, body, headers):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


class Setup:
    def __init__(self):
        self.simulator = APNsSimulator()
        self.pem = make_p8()
        self.simulator.set_keys({KEY_ID: (TEAM, self.pem)})
        self.herald = HeraldServer()
        self.project = self.herald.create_project(PROJECT)
        self.key_file = os.path.join(self.herald.directory, f"AuthKey_{KEY_ID}.p8")
        with open(self.key_file, "w") as f:
            f.write(self.pem)
        self.upload(self.key_file, KEY_ID)
        self.start()

    @property
    def app(self):
        # Each test's apps are deleted after it (conftest): one is made per test.
        import firebase_admin
        try:
            return firebase_admin.get_app("apns")
        except ValueError:
            return herald_sdk.initialize(self.herald.url, self.project["key_file"], name="apns")

    def upload(self, key_file, key_id):
        self.herald.cli("project", "apns-key", PROJECT, "--key-file", key_file, "--key-id", key_id,
                        "--team-id", TEAM, "--bundle-id", BUNDLE, "--environment", "both")

    def start(self):
        url = f"https://127.0.0.1:{self.simulator.port}"
        self.herald.start("--apns-production-url", url, "--apns-development-url", url,
                          "--outbound-ca", self.simulator.ca_file)

    def import_tokens(self, tokens, sandbox=False):
        return post(f"{self.herald.url}/iid/v1:batchImport",
                    {"application": BUNDLE, "sandbox": sandbox, "apns_tokens": tokens},
                    {"Authorization": f"key={self.project['server_key']}"})

    def device(self):
        """A new device the simulator knows, imported: (APNs token, registration token)."""
        apns = self.simulator.add_device(BUNDLE)
        status, body = self.import_tokens([apns])
        assert status == 200 and body["results"][0]["status"] == "OK", body
        return apns, body["results"][0]["registration_token"]

    def received_for(self, apns):
        return [r for r in self.simulator.accepted() if r["token"] == apns]

    def close(self):
        self.herald.stop()
        self.simulator.close()


@pytest.fixture(scope="module")
def setup():
    s = Setup()
    yield s
    s.close()


def test_batch_import_gives_a_token_per_apns_token_and_the_same_one_again(setup):
    tokens = [setup.simulator.add_device(BUNDLE) for _ in range(3)]
    status, body = setup.import_tokens(tokens + ["not-hex"])
    assert status == 200
    results = body["results"]
    assert [r["apns_token"] for r in results] == tokens + ["not-hex"]
    assert [r["status"] for r in results] == ["OK", "OK", "OK", "INVALID_ARGUMENT"]
    assert "registration_token" not in results[3]
    again = setup.import_tokens(tokens[:1])[1]["results"][0]
    assert again["registration_token"] == results[0]["registration_token"]
    # More than 100 tokens, no credentials, or no bundle id: refused as a whole.
    assert setup.import_tokens(["ab" * 32] * 101)[0] == 400
    assert post(f"{setup.herald.url}/iid/v1:batchImport", {"application": BUNDLE, "apns_tokens": tokens},
                {"Authorization": "key=wrong"})[0] == 401
    assert post(f"{setup.herald.url}/iid/v1:batchImport", {"apns_tokens": tokens},
                {"Authorization": f"key={setup.project['server_key']}"})[0] == 400


def test_a_firebase_admin_send_becomes_the_request_fcm_would_make(setup):
    apns, token = setup.device()
    message_name = messaging.send(messaging.Message(
        token=token,
        notification=messaging.Notification(title="Score", body="2-1", image="https://example.com/goal.png"),
        data={"match": "42"},
        apns=messaging.APNSConfig(
            headers={"apns-collapse-id": "match-42"},
            payload=messaging.APNSPayload(aps=messaging.Aps(badge=3, sound="goal.caf", category="SCORE",
                                                            thread_id="match-42"),
                                          custom_key="custom"))), app=setup.app)
    received = wait_for(lambda: setup.received_for(apns))
    assert len(received) == 1
    request = received[0]
    headers = request["headers"]
    assert headers["apns-topic"] == BUNDLE
    assert headers["apns-push-type"] == "alert"
    assert headers["apns-priority"] == "10"
    assert headers["apns-collapse-id"] == "match-42"
    assert int(headers["apns-expiration"]) > time.time() + 27 * 86400
    message_id = message_name.rsplit("/", 1)[1]
    assert request["payload"] == {
        "aps": {"alert": {"title": "Score", "body": "2-1"}, "badge": 3, "sound": "goal.caf", "category": "SCORE",
                "thread-id": "match-42", "mutable-content": 1},
        "custom_key": "custom", "match": "42", "fcm_options": {"image": "https://example.com/goal.png"},
        "gcm.message_id": message_id,
    }
    # The Data API counts the hand-off as a delivery.
    metrics = setup.herald.metrics()
    assert 'herald_apns_hand_offs_total{outcome="delivered"}' in metrics


def test_background_messages_go_as_background_pushes_at_priority_5_with_one_provider_token(setup):
    apns, token = setup.device()
    for index in range(20):
        messaging.send(messaging.Message(
            token=token, data={"n": str(index)},
            apns=messaging.APNSConfig(payload=messaging.APNSPayload(aps=messaging.Aps(content_available=True)))),
            app=setup.app)
    received = wait_for(lambda: len(setup.received_for(apns)) == 20 and setup.received_for(apns))
    assert {r["headers"]["apns-push-type"] for r in received} == {"background"}
    assert {r["headers"]["apns-priority"] for r in received} == {"5"}
    assert sorted(int(r["payload"]["n"]) for r in received) == list(range(20))
    assert len({r["jwt"] for r in setup.simulator.accepted()}) == 1


def test_after_a_410_the_next_send_answers_unregistered(setup):
    apns, token = setup.device()
    setup.simulator.unregister(apns)
    messaging.send(messaging.Message(token=token, notification=messaging.Notification(title="gone")), app=setup.app)
    wait_for(lambda: (410, "Unregistered") in setup.simulator.refused)

    def unregistered():
        try:
            messaging.send(messaging.Message(token=token, data={"k": "v"}), app=setup.app)
            return False
        except messaging.UnregisteredError:
            return True
    wait_for(unregistered, timeout=10, interval=0.2)


def test_the_ios_sdk_registration_as_its_source_builds_it_gives_a_token_a_send_reaches(setup):
    base = setup.herald.url
    api_key = {"X-Goog-Api-Key": setup.project["api_key"]}
    status, installation = post(f"{base}/v1/projects/{PROJECT}/installations",
                                {"fid": "cAbCdEfGhIjKlMnOpQrStU", "appId": f"1:{setup.project['number']}:ios:0a1b2c",
                                 "authVersion": "FIS_v2", "sdkVersion": "i:11.0.0"}, api_key)
    assert status == 200, installation
    fid = installation["fid"]
    apns = setup.simulator.add_device(BUNDLE)
    # FIRMessagingFIDRegisterOperation: the API key, the installation's auth token, the `ios` block.
    status, body = post(f"{base}/v1/projects/{PROJECT}/registrations",
                        {"ios": {"apns_token": apns, "app_version": "1.0", "apns_environment": "SANDBOX",
                                 "bundle_id": BUNDLE}, "fcm_sdk_version": "fcm-11.0.0"},
                        {**api_key, "X-Goog-Firebase-Installations-Auth": installation["authToken"]["token"]})
    assert status == 200, body
    assert body["name"] == f"projects/{PROJECT}/registrations/{fid}"
    # Without the installation's auth token nothing is registered.
    assert post(f"{base}/v1/projects/{PROJECT}/registrations",
                {"ios": {"apns_token": apns, "apns_environment": "PROD", "bundle_id": BUNDLE}}, api_key)[0] == 401
    messaging.send(messaging.Message(fid=fid, notification=messaging.Notification(title="by fid"))
                   if hasattr(messaging.Message, "fid") or "fid" in messaging.Message.__init__.__code__.co_varnames
                   else messaging.Message(token=body["token"], notification=messaging.Notification(title="by fid")),
                   app=setup.app)
    received = wait_for(lambda: setup.received_for(apns))
    assert received[0]["payload"]["aps"]["alert"] == {"title": "by fid"}


def test_a_refused_credential_is_shown_once_and_holds_messages_until_the_right_key(setup, tmp_path):
    apns, token = setup.device()
    wrong = tmp_path / "AuthKey_WRONG12345.p8"
    wrong.write_text(make_p8())
    setup.upload(str(wrong), "WRONG12345")
    time.sleep(1.5)  # the server reads credentials at most once a second
    for index in range(5):
        messaging.send(messaging.Message(token=token, data={"n": str(index)}), app=setup.app)
    wait_for(lambda: (403, "InvalidProviderToken") in setup.simulator.refused)
    time.sleep(6)
    # Held back, not retried in a loop: one batch was refused, and nothing arrived.
    assert setup.simulator.refused.count((403, "InvalidProviderToken")) <= 5
    assert setup.received_for(apns) == []
    with open(os.path.join(setup.herald.directory, "serve.log")) as log:
        assert log.read().count("apns refuses the project's credential") == 1
    assert "herald_apns_credential_refusals_total" in setup.herald.metrics()
    # Counted against the project as FCM's THIRD_PARTY_AUTH_ERROR: the console's refusals by
    # code read these counts, which the node adds to the store every few seconds.
    def counted():
        database = sqlite3.connect(f"file:{os.path.join(setup.herald.data_dir, 'herald.sqlite')}?mode=ro", uri=True)
        try:
            return database.execute("SELECT SUM(value) FROM error_counts WHERE project_id = ? AND code = ?",
                                    (PROJECT, "THIRD_PARTY_AUTH_ERROR")).fetchone()[0]
        finally:
            database.close()
    assert wait_for(counted, timeout=20, interval=0.5) == 1
    setup.upload(setup.key_file, KEY_ID)
    received = wait_for(lambda: len(setup.received_for(apns)) == 5 and setup.received_for(apns), timeout=30)
    assert sorted(r["payload"]["n"] for r in received) == ["0", "1", "2", "3", "4"]


def test_while_apns_is_down_messages_wait_and_all_arrive_after(setup):
    apns, token = setup.device()
    setup.simulator.go_down()
    try:
        for index in range(20):
            messaging.send(messaging.Message(token=token, data={"n": str(index)}), app=setup.app)
        time.sleep(10)
        assert setup.received_for(apns) == []
    finally:
        setup.simulator.come_up()
    received = wait_for(lambda: len(setup.received_for(apns)) >= 20 and setup.received_for(apns), timeout=60)
    assert sorted(int(r["payload"]["n"]) for r in received) == list(range(20))


def test_kill_9_during_1000_hand_offs_loses_none_and_a_repeat_carries_the_same_apns_id(setup):
    import threading
    devices = [setup.device() for _ in range(50)]
    tokens = {apns for apns, _ in devices}
    sent = []

    def send_all():
        for batch in range(2):
            messages = [messaging.Message(token=devices[i % 50][1], data={"i": str(batch * 500 + i)})
                        for i in range(500)]
            try:
                answer = messaging.send_each(messages, app=setup.app)
            except Exception:
                return
            # Only what Herald answered with a name was accepted: that must arrive.
            sent.extend(r.message_id.rsplit("/", 1)[1] for r in answer.responses if r.success)
    sender = threading.Thread(target=send_all)
    sender.start()

    def arrived():
        return [r for r in setup.simulator.accepted() if r["token"] in tokens]
    wait_for(lambda: len(arrived()) >= 100, timeout=30, interval=0.005)
    setup.herald.process.send_signal(signal.SIGKILL)
    setup.herald.process.wait()
    before = len(arrived())
    sender.join()
    assert len(sent) >= 100
    setup.start()
    received = wait_for(lambda: set(sent) <= {r["payload"]["gcm.message_id"] for r in arrived()} and arrived(),
                        timeout=90)
    ids = {}
    for request in received:
        ids.setdefault(request["payload"]["gcm.message_id"], set()).add(request["apns_id"])
    assert all(len(apns_ids) == 1 for apns_ids in ids.values())
    print(f"accepted {len(sent)}; arrived before the kill: {before}; after: {len(received)} requests "
          f"for {len(ids)} messages")


def test_topic_and_legacy_sends_reach_apns_app_instances_beside_the_others(setup):
    devices = [setup.device() for _ in range(3)]
    assert messaging.subscribe_to_topic([token for _, token in devices], "ios-news", app=setup.app).success_count == 3
    messaging.send(messaging.Message(topic="ios-news", notification=messaging.Notification(title="News")),
                   app=setup.app)
    for apns, _ in devices:
        received = wait_for(lambda: setup.received_for(apns))
        assert received[0]["payload"]["aps"]["alert"] == {"title": "News"}
    # The legacy HTTP API with the server key, to one of them.
    status, body = post(f"{setup.herald.url}/fcm/send",
                        {"to": devices[0][1], "notification": {"title": "Legacy", "badge": 2}},
                        {"Authorization": f"key={setup.project['server_key']}"})
    assert status == 200 and body["success"] == 1, body
    received = wait_for(lambda: len(setup.received_for(devices[0][0])) == 2 and setup.received_for(devices[0][0]))
    assert received[1]["payload"]["aps"]["alert"]["title"] == "Legacy"


def test_an_app_instance_with_keys_gets_payloads_apple_cannot_read_that_its_extension_opens(setup, tmp_path):
    apns = setup.simulator.add_device(BUNDLE)
    identity = str(tmp_path / "ios-identity.json")
    registered = subprocess.run(
        [HERALD, "device", "--server", setup.herald.url, "--project", PROJECT, "--api-key", setup.project["api_key"],
         "--app-id", BUNDLE, "--platform", "apple", "--apns-token", apns, "--apns-sandbox", "--identity", identity],
        capture_output=True, text=True, timeout=60)
    assert registered.returncode == 0, registered.stderr
    token = registered.stdout.split("token: ", 1)[1].split()[0]
    messaging.send(messaging.Message(
        token=token, notification=messaging.Notification(title="Secret title", body="Secret body"),
        data={"pin": "4711"}), app=setup.app)
    received = wait_for(lambda: setup.received_for(apns))[0]
    # Apple sees a generic alert and ciphertext: nothing of the message.
    seen = json.dumps(received["payload"])
    assert "Secret" not in seen and "4711" not in seen
    assert received["payload"]["aps"] == {"alert": {"body": "New notification"}, "mutable-content": 1}
    assert received["headers"]["apns-push-type"] == "alert"
    sealed = tmp_path / "payload.json"
    sealed.write_text(json.dumps(received["payload"]))
    opened = subprocess.run([HERALD, "device", "--project", PROJECT, "--api-key", "-", "--app-id", BUNDLE,
                             "--identity", identity, "--open-sealed", str(sealed)],
                            capture_output=True, text=True, timeout=60)
    assert opened.returncode == 0, opened.stderr
    payload = json.loads(opened.stdout)
    assert payload["aps"]["alert"] == {"title": "Secret title", "body": "Secret body"}
    assert payload["pin"] == "4711" and "gcm.message_id" in payload
    # Another app instance's keys do not open it.
    other = str(tmp_path / "other.json")
    assert subprocess.run(
        [HERALD, "device", "--server", setup.herald.url, "--project", PROJECT, "--api-key", setup.project["api_key"],
         "--app-id", BUNDLE, "--platform", "apple", "--apns-token", setup.simulator.add_device(BUNDLE),
         "--identity", other], capture_output=True, timeout=60).returncode == 0
    assert subprocess.run([HERALD, "device", "--project", PROJECT, "--api-key", "-", "--app-id", BUNDLE,
                           "--identity", other, "--open-sealed", str(sealed)],
                          capture_output=True, timeout=60).returncode != 0


def test_an_older_ios_sdks_check_in_and_token_fetch_with_its_apns_token_give_a_token_a_send_reaches(setup):
    import urllib.parse
    base = setup.herald.url
    # FIRMessagingCheckinService: JSON in and out, the ids as JSON numbers.
    checkin = {"checkin": {"iosbuild": {"model": "iPhone15,2", "os_version": "IOS_17.4"}, "type": 2,
                           "user_number": 0, "last_checkin_msec": 0},
               "fragment": 0, "locale": "en_US", "version": 2, "digest": "", "time_zone": "Europe/Berlin",
               "user_serial_number": 0, "id": 0, "security_token": 0}
    status, answer = post(f"{base}/checkin", checkin, {})
    assert status == 200 and answer["android_id"] > 0 and 0 < answer["security_token"] < 2 ** 63, answer
    device, secret = str(answer["android_id"]), str(answer["security_token"])
    # Checking in again with them keeps them.
    again = post(f"{base}/checkin", {**checkin, "id": int(device), "security_token": int(secret)}, {})[1]
    assert str(again["android_id"]) == device
    status, installation = post(f"{base}/v1/projects/{PROJECT}/installations",
                                {"appId": f"1:{setup.project['number']}:ios:0a1b2c", "authVersion": "FIS_v2"},
                                {"X-Goog-Api-Key": setup.project["api_key"]})
    apns = setup.simulator.add_device(BUNDLE)
    # FIRMessagingTokenFetchOperation: the standard items, sender, X-subtype, appid, apns_token.
    form = urllib.parse.urlencode([
        ("X-osv", "17.4"), ("device", device), ("X-scope", "*"), ("plat", "2"), ("app", BUNDLE),
        ("app_ver", "1.0"), ("X-cliv", "fiid-10.0.0"), ("sender", setup.project["number"]),
        ("X-subtype", setup.project["number"]), ("appid", installation["fid"]), ("apns_token", f"p_{apns}"),
    ]).encode()
    request = urllib.request.Request(f"{base}/register", data=form, method="POST", headers={
        "Authorization": f"AidLogin {device}:{secret}", "app": BUNDLE, "info": "herald",
        "x-goog-firebase-installations-auth": installation["authToken"]["token"],
        "Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    assert text.startswith("token="), text
    token = text.split("=", 1)[1].strip()
    messaging.send(messaging.Message(token=token, notification=messaging.Notification(title="old sdk")),
                   app=setup.app)
    received = wait_for(lambda: setup.received_for(apns))
    assert received[0]["payload"]["aps"]["alert"] == {"title": "old sdk"}
    # The same request again answers the same token.
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.read().decode().strip() == f"token={token}"


def test_a_certificate_credential_hands_off_over_a_client_certificate_connection(setup, tmp_path):
    from cryptography.hazmat.primitives import serialization
    from test_apns_credentials import apple_certificate
    key, certificate = apple_certificate()
    certificate_pem = certificate.public_bytes(serialization.Encoding.PEM).decode()
    setup.simulator.trust_client_certificates(certificate_pem)
    project = setup.herald.create_project("apns-certified")
    bundle = tmp_path / "push.pem"
    bundle.write_text(certificate_pem + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode())
    setup.herald.cli("project", "apns-certificate", "apns-certified", "--certificate", str(bundle))
    time.sleep(1.5)  # the running server picks up the new project and credential
    apns = setup.simulator.add_device("com.example.certified")
    status, body = post(f"{setup.herald.url}/iid/v1:batchImport",
                        {"application": "com.example.certified", "apns_tokens": [apns]},
                        {"Authorization": f"key={project['server_key']}"})
    assert status == 200, body
    app = herald_sdk.initialize(setup.herald.url, project["key_file"], name="apns-certified")
    messaging.send(messaging.Message(token=body["results"][0]["registration_token"],
                                     notification=messaging.Notification(title="certified")), app=app)
    received = wait_for(lambda: setup.received_for(apns))[0]
    assert received["certificate"] == "com.example.certified" and received["jwt"] == ""
    assert received["payload"]["aps"]["alert"] == {"title": "certified"}
