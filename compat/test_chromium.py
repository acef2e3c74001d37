"""An unmodified Chromium (Debian's `chromium`, headless) whose push service is Herald:
pointed at it with --gcm-checkin-url, --gcm-registration-url and --gcm-mcs-endpoint, trusting
Herald's CA through an NSS database. Two origins subscribe with the Push API, one
unsubscribes, and the other still receives a message sent with firebase-admin; the browser's
own log (chrome://gcm-internals) shows its unregistration succeeded, and `herald project show`
lists the sites' registrations. A Web Push library
(pywebpush, VAPID) reaches a service worker through Herald in both encodings. Rules: L2, L6.

Driven over the DevTools protocol; notification permission is granted with
Browser.grantPermissions, which holds only while that DevTools connection stays open."""
import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from firebase_admin import messaging

import herald_sdk
from conftest import free_port, serve_site

CHROMIUM = shutil.which("chromium") or "chromium"  # scripts/test installs Debian's chromium and libnss3-tools

PAGE = b"""<!doctype html><title>push</title><script>
async function subscribe(key) {
  const registration = await navigator.serviceWorker.register('/sw.js');
  await navigator.serviceWorker.ready;
  const subscription = await registration.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: key});
  return JSON.stringify(subscription.toJSON());
}
async function unsubscribe() {
  const registration = await navigator.serviceWorker.ready;
  return await (await registration.pushManager.getSubscription()).unsubscribe();
}
</script>"""
WORKER = b"""self.addEventListener('push', event => {
  const text = event.data ? event.data.text() : '';
  event.waitUntil(Promise.all([
    fetch('/log', {method: 'POST', body: text}),
    self.registration.showNotification('Herald', {body: text.slice(0, 40)}),
  ]));
});"""


class Origin:
    """A site on http://localhost:PORT (a secure context) serving the page and its service
    worker, and collecting what the worker reports of each push."""

    def __init__(self):
        self.pushes = queue.Queue()
        pushes = self.pushes
        self.server, self.url = serve_site("localhost", PAGE, WORKER, lambda path, text: pushes.put(text))

    def stop(self):
        self.server.shutdown()


class DevTools:
    """One DevTools protocol connection to the browser, with flat sessions for its pages."""

    def __init__(self, port):
        import websocket

        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=1) as response:
                    url = json.loads(response.read())["webSocketDebuggerUrl"]
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        self.socket = websocket.create_connection(url, timeout=60)
        self.next_id = 0

    def call(self, method, session=None, **params):
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params}
        if session:
            request["sessionId"] = session
        self.socket.send(json.dumps(request))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def open(self, url):
        target = self.call("Target.createTarget", url=url)["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        # A new target starts on about:blank, already complete: wait for the page asked for.
        self.wait_for(session, f"location.href.startsWith({json.dumps(url)}) && document.readyState === 'complete'")
        return session

    def evaluate(self, session, expression):
        result = self.call("Runtime.evaluate", session, expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, session, expression, seconds=20):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                if self.evaluate(session, expression):
                    return
            except RuntimeError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"not true within {seconds} s: {expression}")


def application_server_key():
    key = ec.generate_private_key(ec.SECP256R1())
    raw = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def post_json(url, body, headers):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def web_registration(herald, project, subscription, application_server_key=None):
    """An FCM token for a browser subscription, made as the Firebase JS SDK makes it: an
    installation, then a registration naming the subscription's endpoint and keys, and the
    site's own key when it has one (`applicationPubKey`)."""
    api = {"x-goog-api-key": project["api_key"]}
    installation = post_json(f"{herald.url}/v1/projects/{project['id']}/installations",
                             {"appId": f"1:{project['number']}:web:chromium", "authVersion": "FIS_v2"}, api)
    web = {"endpoint": subscription["endpoint"], "p256dh": subscription["keys"]["p256dh"],
           "auth": subscription["keys"]["auth"]}
    if application_server_key:
        web["applicationPubKey"] = application_server_key
    registration = post_json(
        f"{herald.url}/v1/projects/{project['id']}/registrations", {"web": web},
        {**api, "x-goog-firebase-installations-auth": installation["authToken"]["token"]})
    return registration["token"]


@contextlib.contextmanager
def chromium(ca_file, *flags):
    """A headless Debian Chromium with its own profile, trusting `ca_file` through an NSS
    database in its HOME, driven over DevTools; `flags` are added to its command line."""
    home = tempfile.mkdtemp(prefix="herald-chromium-")
    nssdb = os.path.join(home, ".pki", "nssdb")
    os.makedirs(nssdb)
    subprocess.run(["certutil", "-d", f"sql:{nssdb}", "-N", "--empty-password"], check=True, capture_output=True)
    subprocess.run(["certutil", "-d", f"sql:{nssdb}", "-A", "-t", "C,,", "-n", "herald", "-i", ca_file],
                   check=True, capture_output=True)
    port = free_port()
    log = open(os.path.join(home, "chromium.log"), "wb")
    process = subprocess.Popen(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={os.path.join(home, 'profile')}", f"--remote-debugging-port={port}", *flags,
         "about:blank"],
        env={**os.environ, "HOME": home}, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield DevTools(port)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def browser(herald):
    with chromium(herald.ca_file, f"--gcm-checkin-url={herald.url}/checkin",
                  f"--gcm-registration-url={herald.url}/c2dm/register3",
                  f"--gcm-mcs-endpoint=https://127.0.0.1:{herald.gateway_port}") as devtools:
        yield devtools


def test_L6_a_browser_unsubscribes_one_site_and_the_other_still_receives(herald, browser):
    project = herald.projects["compat-devices"]
    app = herald_sdk.initialize(herald.url, project["key_file"], name="chromium")
    origins = [Origin(), Origin()]
    try:
        for origin in origins:
            browser.call("Browser.grantPermissions", origin=origin.url, permissions=["notifications"])
        internals = browser.open("chrome://gcm-internals")
        browser.evaluate(internals, "chrome.send('setRecording', [true])")

        # Each site's own key, which the project holds as its web push certificates.
        keys = [application_server_key() for _ in origins]
        herald.cli("project", "set", project["id"], "web-push-keys=" + ",".join(keys))
        time.sleep(1.5)  # a running server reads settings within a second
        sessions, tokens = [], []
        for origin, key in zip(origins, keys):
            session = browser.open(f"{origin.url}/")
            subscription = json.loads(browser.evaluate(session, f"subscribe('{key}')"))
            assert subscription["endpoint"].split("/fcm/send/")[1]
            sessions.append(session)
            tokens.append(web_registration(herald, project, subscription, key))

        # herald project show lists the browser's registrations by the site their channel is for.
        shown = herald.cli("project", "show", project["id"])
        assert all(f"{origin.url}/" in shown for origin in origins)

        for origin, token in zip(origins, tokens):
            messaging.send(messaging.Message(token=token, data={"site": origin.url}), app=app)
            assert origin.url in origins[origins.index(origin)].pushes.get(timeout=30)

        assert browser.evaluate(sessions[0], "unsubscribe()") is True
        # The browser's delete removes that site's channel and the FCM token built on it ...
        deadline = time.time() + 20
        while True:
            try:
                messaging.send(messaging.Message(token=tokens[0], data={"after": "unsubscribe"}), dry_run=True,
                               app=app)
            except messaging.UnregisteredError:
                break
            assert time.time() < deadline, "the unsubscribed site's token is still registered"
            time.sleep(0.3)
        shown = herald.cli("project", "show", project["id"])
        assert f"{origins[0].url}/" not in shown and f"{origins[1].url}/" in shown
        # ... and only that one: the other site still receives.
        messaging.send(messaging.Message(token=tokens[1], data={"still": "subscribed"}), app=app)
        assert "subscribed" in origins[1].pushes.get(timeout=30)

        browser.wait_for(internals, "document.body.innerText.includes('Unregistration response received')")
        text = browser.evaluate(internals, "document.body.innerText")
        assert "Unregistration response received\tSUCCESS" in text
        for failure in ("RESPONSE_PARSING_FAILED", "UNKNOWN_ERROR", "Unregistration retry delayed", "INCORRECT_APP_ID"):
            assert failure not in text
    finally:
        for origin in origins:
            origin.stop()


def test_a_web_push_library_reaches_the_service_worker_of_a_real_browser(herald, browser):
    """pywebpush with a VAPID key posts to the browser's own subscription (its endpoint's
    Google origin swapped for Herald's): the browser decrypts it and its service worker's
    push event sees the plaintext. Herald never holds the keys."""
    from py_vapid import Vapid
    from pywebpush import webpush

    vapid = Vapid()
    vapid.generate_keys()
    point = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    key = base64.urlsafe_b64encode(point).rstrip(b"=").decode()
    origin = Origin()
    try:
        browser.call("Browser.grantPermissions", origin=origin.url, permissions=["notifications"])
        session = browser.open(f"{origin.url}/")
        subscription = json.loads(browser.evaluate(session, f"subscribe('{key}')"))
        token = subscription["endpoint"].split("/fcm/send/")[1]
        subscription["endpoint"] = f"{herald.url}/fcm/send/{token}"
        for encoding in ("aes128gcm", "aesgcm"):
            answer = webpush(subscription, data=f"hello browser {encoding}", vapid_private_key=vapid,
                             vapid_claims={"sub": "mailto:ops@example.com"}, content_encoding=encoding, ttl=60)
            assert answer.status_code == 201
            assert origin.pushes.get(timeout=30) == f"hello browser {encoding}"
    finally:
        origin.stop()
