"""Web registrations at a browser's own push service, handed off as Web Push (SEMANTICS W1–W5).
A second Herald plays the browser's push service: a `herald device --web-push` subscription
on it, made with the first Herald's project key, is the registration's endpoint (its drop-in
HTTPS listener, HTTP/2), and `--web-push-service localhost` names it. The registration is made
as Firebase's JavaScript SDK makes it (an installation, then `registrations`); firebase-admin
sends to the first Herald, and the device decrypts exactly the payload the SDK's service
worker reads."""
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from firebase_admin import exceptions, messaging

import herald_sdk
from conftest import HeraldDevice, HeraldServer, counter, event_types, free_port, wait_for
from push_service import PushService

APP = "wp-app"
BROWSER = "wp-browser"
# A browser's keys, for registrations whose messages no browser reads.
KEYS = {"p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
        "auth": "tBHItJI5svbpez7KI4CCXg"}


def post(url, body, headers):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


class Pair:
    """The first Herald (the app server's) and the second (the browser's push service)."""

    def __init__(self):
        self.service = HeraldServer()
        self.service.projects = {BROWSER: self.service.create_project(BROWSER)}
        self.drop_in_port, self.xmpp_port = free_port(), free_port()
        self.start_service()
        # A stand-in push service whose answers a test chooses by the endpoint's path.
        self.stand_in = PushService(answers=lambda path: 413 if path.startswith("/large/") else 201)
        self.stand_in.come_up()
        # One that refuses every JWT, as a service refusing the project's key would.
        self.refusing = PushService(answers=lambda path: 401)
        self.refusing.come_up()
        self.herald = HeraldServer()
        self.herald.projects = {APP: self.herald.create_project(APP)}
        self.key = self.herald.cli("project", "web-push-key", APP).strip()
        assert self.herald.cli("project", "web-push-key", APP).strip() == self.key
        self.start_herald()

    def start_service(self):
        # The JWTs name the origin the endpoints are at, which the service takes as its own.
        self.service.start("--drop-in", "--drop-in-port", str(self.drop_in_port), "--drop-in-hostname", "localhost",
                           "--xmpp-port", str(self.xmpp_port),
                           "--web-push-audience", f"https://localhost:{self.drop_in_port}")

    def start_herald(self, allow="localhost"):
        self.herald.start("--web-push-service", "localhost", "--web-push-service", "127.0.0.1",
                          "--allow-webhook-host", allow,
                          "--outbound-ca", os.path.join(self.service.data_dir, "tls", "drop-in-ca.pem"),
                          "--outbound-ca", self.stand_in.ca_file, "--outbound-ca", self.refusing.ca_file)

    @property
    def app(self):
        import firebase_admin
        try:
            return firebase_admin.get_app("web-push-hand-off")
        except ValueError:
            return herald_sdk.initialize(self.herald.url, self.herald.projects[APP]["key_file"],
                                         name="web-push-hand-off")

    def browser(self, identity):
        """A subscription at the push service, made with the project's key, and its endpoint
        at the service's HTTPS listener."""
        device = HeraldDevice(self.service, BROWSER, os.path.join(self.service.directory, f"browser-{identity}.json"),
                              "--web-push", "--application-server-key", self.key)
        path = urllib.parse.urlsplit(device.line().split(": ", 1)[1]).path
        device.endpoint = f"https://localhost:{self.drop_in_port}{path}"
        device.keys = json.loads(device.line().split(": ", 1)[1])
        return device

    def register(self, endpoint, keys, application_key="project"):
        """Registers a subscription as Firebase's JavaScript SDK does; answers the status and body."""
        project = self.herald.projects[APP]
        api = {"x-goog-api-key": project["api_key"]}
        status, installation = post(f"{self.herald.url}/v1/projects/{APP}/installations",
                                    {"appId": f"1:{project['number']}:web:site", "authVersion": "FIS_v2"}, api)
        assert status == 200, installation
        web = {"endpoint": endpoint, "p256dh": keys["p256dh"], "auth": keys["auth"]}
        if application_key:
            web["applicationPubKey"] = self.key if application_key == "project" else application_key
        return post(f"{self.herald.url}/v1/projects/{APP}/registrations", {"web": web},
                    {**api, "x-goog-firebase-installations-auth": installation["authToken"]["token"]})

    def token(self, device):
        status, body = self.register(device.endpoint, device.keys)
        assert status == 200, body
        return body["token"]

    def close(self):
        self.herald.stop()
        self.service.stop()
        self.stand_in.go_down()
        self.refusing.go_down()


@pytest.fixture(scope="module")
def pair():
    p = Pair()
    yield p
    p.close()


def payload(device, timeout=20):
    return json.loads(device.message(timeout=timeout)["push"])


def unregistered(pair, token):
    try:
        messaging.send(messaging.Message(token=token, data={"again": "1"}), app=pair.app)
        return False
    except messaging.UnregisteredError:
        return True


def test_W2_the_browser_decrypts_the_payload_firebases_service_worker_reads(pair):
    device = pair.browser("a")
    try:
        token = pair.token(device)
        number = pair.herald.projects[APP]["number"]
        name = messaging.send(messaging.Message(
            token=token, notification=messaging.Notification(title="Score", body="2-1"), data={"k": "v"},
            webpush=messaging.WebpushConfig(
                headers={"Urgency": "high"}, fcm_options=messaging.WebpushFCMOptions(link="https://site.example/a"))),
            app=pair.app)
        message_id = name.rsplit("/", 1)[1]
        shown = payload(device)
        # Urgency high is the message's priority; a notification collapses by the web app's id (D2).
        assert shown == {"data": {"k": "v"}, "notification": {"title": "Score", "body": "2-1"}, "from": number,
                         "priority": "high", "fcmMessageId": message_id,
                         "fcmOptions": {"link": "https://site.example/a"}, "collapse_key": f"1:{number}:web:site"}
        for i in range(5):
            messaging.send(messaging.Message(token=token, data={"n": str(i)}), app=pair.app)
        assert sorted(int(payload(device)["data"]["n"]) for _ in range(5)) == list(range(5))
        # The hand-off is an event of the message; one JWT serves every hand-off to the service.
        assert wait_for(lambda: event_types(pair.herald, APP, name, pair.app)) == ["accepted", "handed_off"]
        metrics = pair.herald.metrics()
        assert counter(metrics, "herald_web_push_hand_offs_total", 'outcome="delivered"') >= 6
        assert counter(metrics, "herald_web_push_signatures_total") == 1
    finally:
        device.stop()


def test_W1_registrations_name_a_known_reachable_service_with_the_projects_key(pair):
    keys = KEYS
    for endpoint in ["https://push.example.org/send/abc", "http://localhost:1/wp/abc",
                     f"https://127.0.0.1:{pair.drop_in_port}/wp/abc"]:
        status, body = pair.register(endpoint, keys)
        assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT", (endpoint, body)
    assert "allow it with --allow-webhook-host" in pair.register(
        f"https://127.0.0.1:{pair.drop_in_port}/wp/abc", keys)[1]["error"]["message"]
    status, body = pair.register(f"https://localhost:{pair.drop_in_port}/wp/abc", keys,
                                 application_key="BDOU99-h67HcA6JeFXHbSNMu7e2yNNu3RzoMj8TM4W88jITfq7ZmPvIM1Iv"
                                                 "-4_l2LxQcYwhqby2xGpWwzjfAnG4")
    assert status == 400 and pair.key in body["error"]["message"], body
    assert f"web push key (getToken's vapidKey): {pair.key}" in pair.herald.cli("project", "show", APP)


def test_W2_a_body_over_4096_bytes_once_encrypted_is_invalid_argument_at_send_time(pair):
    device = pair.browser("big")
    try:
        token = pair.token(device)
        with pytest.raises(exceptions.InvalidArgumentError):
            messaging.send(messaging.Message(token=token, data={"big": "x" * 3990}), app=pair.app)
        device.nothing(2)
    finally:
        device.stop()


def test_W3_an_unsubscribed_browser_is_unregistered_on_the_next_send(pair):
    device = pair.browser("u")
    token = pair.token(device)
    device.command("unsubscribe")
    assert device.line() == "unsubscribed"
    device.stop()
    messaging.send(messaging.Message(token=token, data={"k": "1"}), app=pair.app)
    wait_for(lambda: unregistered(pair, token), timeout=20)


def test_W3_the_push_service_down_for_30_seconds_loses_nothing(pair):
    device = pair.browser("d")
    try:
        token = pair.token(device)
        pair.service.process.terminate()
        pair.service.process.wait(timeout=15)
        stopped = time.time()
        for i in range(5):
            messaging.send(messaging.Message(token=token, data={"n": str(i)}), app=pair.app)
        wait_for(lambda: counter(pair.herald.metrics(), "herald_web_push_hand_offs_total", 'outcome="retry"') >= 1)
        time.sleep(max(0.0, 30 - (time.time() - stopped)))
        pair.start_service()
        assert sorted(int(payload(device, timeout=90)["data"]["n"]) for _ in range(5)) == list(range(5))
        device.nothing(2)
    finally:
        device.stop()


def test_W3_a_kill_9_of_herald_mid_hand_off_loses_nothing(pair):
    device = pair.browser("k")
    try:
        token = pair.token(device)
        pair.service.process.terminate()
        pair.service.process.wait(timeout=15)
        for i in range(3):
            messaging.send(messaging.Message(token=token, data={"n": str(i)}), app=pair.app)
        time.sleep(1)
        pair.herald.process.kill()
        pair.herald.process.wait(timeout=10)
        pair.start_service()
        pair.start_herald()
        assert sorted(int(payload(device, timeout=90)["data"]["n"]) for _ in range(3)) == [0, 1, 2]
        device.nothing(2)
    finally:
        device.stop()


def test_W3_a_service_that_never_took_the_key_holds_the_projects_messages_with_one_log_line(pair):
    """A service answering 401 to the project's JWT: the messages to it wait for the probe,
    not in a loop, with one log line."""
    status, body = pair.register(f"https://localhost:{pair.refusing.port}/p/1", KEYS)
    assert status == 200, body
    for i in range(3):
        messaging.send(messaging.Message(token=body["token"], data={"n": str(i)}), app=pair.app)
    wait_for(lambda: counter(pair.herald.metrics(), "herald_web_push_credential_refusals_total") >= 1)
    first = pair.refusing.pushes
    time.sleep(8)
    assert pair.refusing.pushes == first <= 3
    with open(os.path.join(pair.herald.directory, "serve.log")) as f:
        assert f.read().count("a push service refuses the project's Web Push key") == 1


def test_W3_a_browser_subscribed_with_another_key_is_unregistered_and_holds_no_one(pair):
    """The service took the project's JWT for one browser, then refuses it (403) for one
    subscribed with another key: that registration goes, the other browser's messages do not wait."""
    good = pair.browser("g")
    stranger_key = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM"
    stranger = HeraldDevice(pair.service, BROWSER, os.path.join(pair.service.directory, "browser-s.json"),
                            "--web-push", "--application-server-key", stranger_key)
    try:
        token = pair.token(good)
        messaging.send(messaging.Message(token=token, data={"n": "1"}), app=pair.app)
        assert payload(good)["data"]["n"] == "1"
        path = urllib.parse.urlsplit(stranger.line().split(": ", 1)[1]).path
        keys = json.loads(stranger.line().split(": ", 1)[1])
        status, body = pair.register(f"https://localhost:{pair.drop_in_port}{path}", keys)
        assert status == 200, body
        messaging.send(messaging.Message(token=body["token"], data={"n": "2"}), app=pair.app)
        wait_for(lambda: unregistered(pair, body["token"]), timeout=20)
        stranger.nothing(1)
        messaging.send(messaging.Message(token=token, data={"n": "3"}), app=pair.app)
        assert payload(good, timeout=5)["data"]["n"] == "3"
    finally:
        good.stop()
        stranger.stop()


def test_W3_a_message_the_service_refuses_for_good_is_withdrawn_as_a_dropped_event(pair):
    status, body = pair.register(f"https://localhost:{pair.stand_in.port}/large/1", KEYS)
    assert status == 200, body
    name = messaging.send(messaging.Message(token=body["token"], data={"k": "v"}), app=pair.app)
    assert wait_for(lambda: event_types(pair.herald, APP, name, pair.app)) == ["accepted", "dropped"]
    assert counter(pair.herald.metrics(), "herald_web_push_hand_offs_total", 'outcome="refused"') >= 1


def test_W1_a_topic_reaches_browsers_through_their_push_service(pair):
    device = pair.browser("t")
    try:
        token = pair.token(device)
        assert messaging.subscribe_to_topic([token], "scores", app=pair.app).success_count == 1
        messaging.send(messaging.Message(topic="scores", notification=messaging.Notification(title="Goal")),
                       app=pair.app)
        assert payload(device)["notification"] == {"title": "Goal"}
    finally:
        device.stop()


def test_W1_a_push_services_address_is_checked_again_at_each_connection(pair):
    """A registration made while its service's address was allowed: once it no longer is, its
    messages wait rather than go there, and go when it is allowed again."""
    device = pair.browser("r")
    try:
        token = pair.token(device)
        pair.herald.process.terminate()
        pair.herald.process.wait(timeout=15)
        pair.start_herald(allow="push.example.org")
        messaging.send(messaging.Message(token=token, data={"n": "1"}), app=pair.app)
        device.nothing(4)
        with open(os.path.join(pair.herald.directory, "serve.log")) as f:
            assert "a push service's address is refused" in f.read()
        pair.herald.process.terminate()
        pair.herald.process.wait(timeout=15)
        pair.start_herald()
        assert payload(device, timeout=60)["data"]["n"] == "1"
    finally:
        device.stop()
