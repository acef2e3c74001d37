"""An unmodified Firefox (Debian's `firefox-esr`, headless) whose push service is Herald,
through Mozilla's push protocol: the profile's user.js names Herald's HTTP port as
`dom.push.serverURL`, as an organisation's policy would. A page on 127.0.0.1 subscribes
from its service worker with an application server key; pywebpush (VAPID, aes128gcm)
reaches the worker, whose push event reports the text back; a message sent while Firefox
is closed arrives once it starts again; the channel belongs to the project named with
--mozilla-push-project, whose event log holds the message's events. Rules: W6, W7."""
import base64
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid02
from pywebpush import webpush

from conftest import serve_site, serving

FIREFOX = shutil.which("firefox-esr") or "firefox-esr"  # scripts/test installs Debian's firefox-esr

PAGE = """<!doctype html><title>push</title><script>
const key = '%s';
function decode(text) {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - text.length %% 4) %% 4);
  return Uint8Array.from(atob(padded), c => c.charCodeAt(0));
}
async function subscribe() {
  const registration = await navigator.serviceWorker.register('/sw.js');
  await navigator.serviceWorker.ready;
  // Firefox's push service connects a few seconds after start and refuses until then.
  for (;;) {
    try {
      // A request made before it connected is dropped unanswered: asked again after a while.
      const subscription = await Promise.race([
        registration.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: decode(key)}),
        new Promise((_, reject) => setTimeout(() => reject(new Error('no answer yet')), 5000)),
      ]);
      await fetch('/subscription', {method: 'POST', body: JSON.stringify(subscription.toJSON())});
      return;
    } catch (error) {
      await fetch('/error', {method: 'POST', body: String(error)});
      await new Promise(resolve => setTimeout(resolve, 1000));
    }
  }
}
subscribe();
</script>"""
WORKER = b"""self.addEventListener('push', event => {
  const text = event.data ? event.data.text() : '';
  event.waitUntil(Promise.all([
    fetch('/push', {method: 'POST', body: text}),
    self.registration.showNotification('Herald', {body: text.slice(0, 40)}),
  ]));
});"""


class Site:
    """A page and its service worker on http://127.0.0.1:PORT (a secure context), collecting
    what the page reports of its subscription and the worker of each push."""

    def __init__(self, application_key):
        self.reports = {"subscription": queue.Queue(), "push": queue.Queue(), "error": queue.Queue()}
        reports = self.reports
        page = (PAGE % application_key).encode()

        self.server, url = serve_site(
            "127.0.0.1", page, WORKER, lambda path, text: reports.get(path.strip("/"), reports["error"]).put(text))
        self.url = url + "/"

    def report(self, kind, timeout=60):
        try:
            return self.reports[kind].get(timeout=timeout)
        except queue.Empty:
            errors = []
            while not self.reports["error"].empty():
                errors.append(self.reports["error"].get())
            raise AssertionError(f"no {kind} report; the page said: {errors[-3:]}")

    def close(self):
        self.server.shutdown()


class Firefox:
    """A headless Firefox with a profile of its own whose push server is `server_url`."""


    def __init__(self, server_url, extra_prefs=()):
        """`server_url` None leaves Firefox's own push server (drop-in mode)."""
        self.profile = tempfile.mkdtemp(prefix="herald-firefox-")
        pushing = {"dom.push.serverURL": server_url, "dom.push.testing.allowInsecureServerURL": True}
        prefs = {
            **(pushing if server_url else {}),
            "permissions.default.desktop-notification": 1,
            "browser.pagethumbnails.capturing_disabled": True,
            "browser.shell.checkDefaultBrowser": False,
            "datareporting.policy.dataSubmissionEnabled": False,
            "toolkit.telemetry.reportingpolicy.firstRun": False,
            "browser.startup.homepage_override.mstone": "ignore",
            "app.update.enabled": False,
            **dict(extra_prefs),
        }
        with open(os.path.join(self.profile, "user.js"), "w") as f:
            for name, value in prefs.items():
                f.write(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n")
        self.process = None

    def start(self, url):
        self.log = open(os.path.join(self.profile, "firefox.log"), "ab")
        self.process = subprocess.Popen(
            [FIREFOX, "--headless", "--no-remote", "--profile", self.profile, url],
            stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, "MOZ_CRASHREPORTER_DISABLE": "1"},
            start_new_session=True)

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def remove(self):
        self.stop()
        shutil.rmtree(self.profile, ignore_errors=True)


def application_key(vapid):
    raw = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def push(subscription, vapid, text, ttl=600):
    return webpush(subscription, data=text, vapid_private_key=vapid,
                   vapid_claims={"sub": "mailto:ops@example.com"}, ttl=ttl)




@pytest.fixture
def herald_for_firefox():
    with serving(["firefox-owner"], "--mozilla-push-project", "firefox-owner") as herald:
        yield herald


def test_firefox_subscribes_and_receives_through_herald(herald_for_firefox):
    herald = herald_for_firefox
    vapid = Vapid02()
    vapid.generate_keys()
    site = Site(application_key(vapid))
    firefox = Firefox(f"ws://127.0.0.1:{herald.port}/")
    try:
        firefox.start(site.url)
        subscription = json.loads(site.report("subscription", timeout=90))
        assert subscription["endpoint"].startswith(f"{herald.url}/wp/")
        assert push(subscription, vapid, "ünïcode from pywebpush ✓").status_code == 201
        assert site.report("push") == "ünïcode from pywebpush ✓"
        # The channel is the named project's: its messages are counted there.
        assert 'herald_mozilla_push_connections_total' in herald.metrics()

        # Sent while Firefox is closed: kept, and delivered when it starts again.
        firefox.stop()
        time.sleep(1)
        assert push(subscription, vapid, "sent while Firefox was closed").status_code == 201
        firefox.start(site.url)
        assert site.report("push", timeout=90) == "sent while Firefox was closed"
        # The page asks again at start: the same channel, the same endpoint.
        assert json.loads(site.report("subscription", timeout=60))["endpoint"] == subscription["endpoint"]
    finally:
        firefox.remove()
        site.close()
