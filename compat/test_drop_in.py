"""Drop-in mode: inside a network namespace whose hosts file maps FCM's host names to 127.0.0.1
(as `ip netns exec` mounts /etc/netns/<name>/hosts), `herald serve --drop-in` answers on 443
under those names with its constrained CA, and clients that were never pointed at Herald
reach it: firebase-admin with its default endpoints (`send`, a dry run, `send_each_async`
over HTTP/2 through httpx, `subscribe_to_topic` and `subscribe_to_topic_legacy`), the
firebase-messaging receiver with its default endpoints (registered, connected, a message
received), curl --http2 to the v1 send endpoint, a device's TLS asking for
`mtalk.google.com` at the gateway, a device falling back to port 443 (told from HTTPS by
that name), Chromium with no GCM switches receiving a Web Push message posted to the
endpoint it returned, and Firefox with no push pref changed (the CA imported into its profile
by certutil) doing the same through Mozilla's host names. A path under a host that does not
serve it is not found.

Runs as root (network namespaces); skipped otherwise."""
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import HERALD, free_port, printed_fields

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"), reason="needs root and iproute2")
COMPAT = os.path.dirname(os.path.abspath(__file__))


class Namespace:
    """A network namespace with its loopback up and FCM's host names on 127.0.0.1."""

    def __init__(self):
        self.name = "herald-" + secrets.token_hex(4)
        self.etc = f"/etc/netns/{self.name}"
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        try:
            self.prepare()
        except BaseException:
            self.delete()
            raise

    def prepare(self):
        self.run("ip", "link", "set", "lo", "up")
        # An interface besides loopback, which leads nowhere: without one, a browser's
        # network watcher reports no connection and its push connection waits for one.
        self.run("ip", "link", "add", "uplink", "type", "veth", "peer", "name", "uplink-peer")
        self.run("ip", "addr", "add", "10.213.0.2/24", "dev", "uplink")
        self.run("ip", "link", "set", "uplink-peer", "up")
        self.run("ip", "link", "set", "uplink", "up")
        self.run("ip", "route", "add", "default", "via", "10.213.0.1")
        hosts = subprocess.run([HERALD, "drop-in", "hosts", "--mozilla"], capture_output=True, text=True,
                               check=True).stdout
        os.makedirs(self.etc)
        with open(f"{self.etc}/hosts", "w") as f:
            f.write("127.0.0.1 localhost\n" + hosts.split("\n")[1] + "\n")

    def run(self, *command, **options):
        return subprocess.run(["ip", "netns", "exec", self.name, *command], **{"check": True, **options})

    def popen(self, *command, **options):
        return subprocess.Popen(["ip", "netns", "exec", self.name, *command], **options)

    def delete(self):
        subprocess.run(["ip", "netns", "del", self.name])
        shutil.rmtree(self.etc, ignore_errors=True)


@pytest.fixture(scope="module")
def drop_in():
    directory = tempfile.mkdtemp(prefix="herald-dropin-")
    data = os.path.join(directory, "data")
    output = subprocess.run(
        [HERALD, "project", "create", "compat-dropin", "--drop-in", "--key-dir", directory, "--data-dir", data],
        capture_output=True, text=True, check=True).stdout
    fields = printed_fields(output)
    key_file = fields["key file"]
    with open(key_file) as f:
        assert json.load(f)["token_uri"] == "https://oauth2.googleapis.com/token"
    namespace = Namespace()
    server = None
    try:
        log = open(os.path.join(directory, "serve.log"), "ab")
        # 5228, as devices and browsers that were never pointed at Herald look for mtalk.google.com.
        namespace.gateway_port = 5228
        namespace.http_port = free_port()
        server = namespace.popen(
            HERALD, "serve", "--data-dir", data, "--http-port", str(namespace.http_port), "--gateway-port",
            str(namespace.gateway_port), "--drop-in", "--mozilla-push-project", "compat-dropin", stdout=log,
            stderr=subprocess.STDOUT)
        ca = os.path.join(data, "tls", "drop-in-ca.pem")
        deadline = time.time() + 30
        while subprocess.run(
                ["ip", "netns", "exec", namespace.name, "curl", "-sf", "--cacert", ca, "-o", "/dev/null",
                 "https://fcm.googleapis.com/v1/projects/compat-dropin/messages:send", "-d", "{}"]).returncode == 7:
            assert time.time() < deadline, "the drop-in listener did not start"
            time.sleep(0.2)
        namespace.project = fields
        yield namespace, key_file, ca, {**os.environ, "SSL_CERT_FILE": ca, "REQUESTS_CA_BUNDLE": ca}
    finally:
        if server:
            server.terminate()
            server.wait(timeout=10)
        namespace.delete()
        shutil.rmtree(directory, ignore_errors=True)


def test_firebase_admin_with_its_default_endpoints_and_curl_over_http2(drop_in):
    namespace, key_file, ca, env = drop_in
    answer = namespace.run(sys.executable, os.path.join(COMPAT, "dropin_client.py"), key_file,
                           namespace.project["api key"], namespace.project["project number"].split()[0],
                           capture_output=True, text=True, env=env, timeout=120)
    results = json.loads(answer.stdout)
    assert results["send"].startswith("projects/compat-dropin/messages/")
    assert results["dry_run"].startswith("projects/compat-dropin/messages/")
    assert len(results["send_each_async"]) == 3 and results["httpx_http_version"] == "HTTP/2"
    # A bulk send as the SDKs make it: 500 at once over one connection, none refused
    # (no REFUSED_STREAM, no GOAWAY); the server allows at least 1,000 streams a connection.
    print("send_each_async of 500:", results["send_each_async_500"], "stream limit:", results["advertised_stream_limit"])
    assert results["send_each_async_500"]["success"] == 500, results["send_each_async_500"]
    assert results["advertised_stream_limit"] >= 1000
    assert results["subscribe_to_topic"] == {"success": 0, "failure": 1, "reasons": ["INVALID_ARGUMENT"]}
    assert results["subscribed"] == {"v1": 1, "legacy": 1}
    assert results["firebase_messaging"] == [{"to": "dropin-legacy"}, {"to": "dropin-v1"}, {"to": "receiver"}]
    # curl --http2: ALPN picks HTTP/2, and a v1 send is accepted.
    curl = namespace.run(
        "curl", "-sS", "--http2", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
        "-H", f"Authorization: Bearer {results['access_token']}", "-H", "Content-Type: application/json",
        "-d", json.dumps({"message": {"topic": "news", "data": {"via": "curl"}}}),
        "https://fcm.googleapis.com/v1/projects/compat-dropin/messages:send", capture_output=True, text=True)
    assert curl.stdout == "2 200"


def test_a_path_under_a_host_that_does_not_serve_it_is_not_found(drop_in):
    namespace, _, ca, _ = drop_in
    for url in ("https://oauth2.googleapis.com/v1/projects/compat-dropin/messages:send",
                "https://android.clients.google.com/token", "https://fcm-xmpp.googleapis.com/healthz"):
        curl = namespace.run("curl", "-sS", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_code}", "-d", "{}", url,
                             capture_output=True, text=True)
        assert curl.stdout == "404", url


def test_the_gateway_and_xmpp_show_the_drop_in_certificate_to_clients_asking_for_fcms_names(drop_in):
    namespace, _, ca, _ = drop_in
    gateway_ca = os.path.join(os.path.dirname(ca), "ca.pem")

    def verified(server_name, trusted, port=namespace.gateway_port):
        probe = namespace.run(
            "openssl", "s_client", "-connect", f"127.0.0.1:{port}", *server_name,
            "-CAfile", trusted, "-verify_return_error", "-brief", input="", capture_output=True, text=True,
            check=False)
        return "Verification: OK" in probe.stderr

    assert verified(["-servername", "mtalk.google.com", "-verify_hostname", "mtalk.google.com"], ca)
    # XMPP app servers find Herald where they look for FCM's: fcm-xmpp.googleapis.com:5235.
    assert verified(["-servername", "fcm-xmpp.googleapis.com", "-verify_hostname", "fcm-xmpp.googleapis.com"], ca,
                    port=5235)
    # Asked for no FCM name, the gateway shows its own certificate, as before.
    assert verified(["-verify_ip", "127.0.0.1"], gateway_ca)
    assert not verified(["-verify_ip", "127.0.0.1"], ca)


def test_a_device_on_port_443_is_told_from_https_by_its_server_name_and_receives(drop_in):
    """Devices fall back to mtalk.google.com:443 when 5228 is blocked: the drop-in listener
    hands a connection asking for that name to the device gateway (N1), while HTTPS on the
    same port keeps answering."""
    namespace, key_file, ca, _ = drop_in
    identity = os.path.join(tempfile.mkdtemp(prefix="herald-dropin-device-"), "identity.json")
    project = namespace.project
    device = namespace.popen(
        HERALD, "device", "--server", f"http://127.0.0.1:{namespace.http_port}", "--project", "compat-dropin",
        "--api-key", project["api key"], "--app-id", "com.example.dropin", "--gateway", "mtalk.google.com:443",
        "--ca", ca, "--identity", identity, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        token = device.stdout.readline().strip().split(": ", 1)[1]
        # The same key, sent over the plain HTTP port: this test is about the device's side.
        with open(key_file) as f:
            account = {**json.load(f), "token_uri": f"http://127.0.0.1:{namespace.http_port}/token"}
        plain_key = os.path.join(os.path.dirname(identity), "key.json")
        with open(plain_key, "w") as f:
            json.dump(account, f)
        namespace.run(HERALD, "send", "--credentials", plain_key, "--token", token, "--data", "via=443",
                      capture_output=True, timeout=30)
        line = device.stdout.readline()
        assert json.loads(line)["data"] == {"via": "443"}, line
        curl = namespace.run("curl", "-sS", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_code}", "-d", "{}",
                             "https://fcm.googleapis.com/v1/projects/compat-dropin/messages:send",
                             capture_output=True, text=True)
        assert curl.stdout == "401"
    finally:
        device.kill()
        device.wait()
        shutil.rmtree(os.path.dirname(identity), ignore_errors=True)


def test_chromium_with_no_gcm_switches_subscribes_and_receives_a_web_push(drop_in):
    """Chromium checks in, registers and connects to FCM's own host names, which resolve to
    Herald; pywebpush posts to the endpoint as Chromium returned it."""
    namespace, _, ca, env = drop_in
    answer = namespace.run(sys.executable, os.path.join(COMPAT, "dropin_browser.py"), ca, capture_output=True,
                           text=True, env=env, timeout=180, check=False)
    result = json.loads(answer.stdout.strip().splitlines()[-1])
    assert result.get("endpoint", "").startswith(("https://fcm.googleapis.com/fcm/send/",
                                                  "https://jmt17.google.com/fcm/send/")), answer.stderr[-2000:]
    assert result.get("status") == 201 and result.get("received") == "hello, unmodified browser", (result, answer.stderr[-3000:])


def test_firefox_with_no_push_pref_changed_subscribes_and_receives_a_web_push(drop_in):
    """Firefox connects to wss://push.services.mozilla.com/, which resolves to Herald and is
    served under the drop-in CA; its endpoint is on updates.push.services.mozilla.com, where
    pywebpush posts as it would to Mozilla's service."""
    namespace, _, ca, env = drop_in
    answer = namespace.run(sys.executable, os.path.join(COMPAT, "dropin_firefox.py"), ca, capture_output=True,
                           text=True, env=env, timeout=180, check=False)
    result = json.loads(answer.stdout.strip().splitlines()[-1])
    assert result.get("endpoint", "").startswith("https://updates.push.services.mozilla.com/wp/"), (
        result, answer.stderr[-2000:])
    assert result.get("status") == 201 and result.get("received") == "hello, unmodified Firefox", (
        result, answer.stderr[-3000:])
