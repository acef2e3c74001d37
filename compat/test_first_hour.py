"""A newcomer's first hour, as the README and the guides tell it: each step works as written,
and each mistake a newcomer makes is told in words that name its cause."""

import json
import os
import re
import select
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HERALD, HeraldDevice, HeraldServer, free_port, printed_fields

PROJECT = "compat-first-hour"
ROOT = os.path.join(os.path.dirname(__file__), "..")


def doc(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


@pytest.fixture(scope="module")
def server():
    herald = HeraldServer()
    herald.projects = {PROJECT: herald.create_project(PROJECT)}
    herald.start()
    yield herald
    herald.stop()


def test_the_quick_start_run_from_another_directory_says_why_its_key_is_refused(server, tmp_path):
    # `herald project create` from another directory makes a store of its own, and says so.
    made = subprocess.run([HERALD, "project", "create", "elsewhere", "--public-url", server.url,
                           "--key-dir", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert "no store in" in made.stderr and "--data-dir" in made.stderr, made.stderr
    key_file = printed_fields(made.stdout)["key file"]
    # Its key is unknown to the server: the answer says so, not that a signature is wrong.
    app = herald_sdk.initialize(server.url, key_file, name="elsewhere")
    with pytest.raises(Exception) as refused:
        messaging.send(messaging.Message(topic="news", data={"k": "v"}), app=app)
    assert "this server has no key" in str(refused.value) and "--data-dir" in str(refused.value), refused.value
    # A command given the server's store makes no second one.
    again = subprocess.run([HERALD, "project", "show", PROJECT, "--data-dir", server.data_dir],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "no store in" not in again.stderr


def test_the_readmes_token_step_sends_with_curl(server):
    token = subprocess.run([HERALD, "token", "--credentials", server.projects[PROJECT]["key_file"]],
                           capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert "TOKEN=$(.build/release/herald token --credentials" in doc("README.md")
    request = urllib.request.Request(
        f"{server.url}/v1/projects/{PROJECT}/messages:send",
        data=json.dumps({"message": {"topic": "news", "notification": {"title": "Hi", "body": "there"}}}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert json.load(answer)["name"].startswith(f"projects/{PROJECT}/messages/")


def test_herald_device_says_why_it_cannot_reach_the_gateway(server):
    project = server.projects[PROJECT]
    closed = free_port()
    device = subprocess.Popen(
        [HERALD, "device", "--server", server.url, "--project", PROJECT, "--api-key", project["api_key"],
         "--app-id", "com.example.first", "--gateway", f"127.0.0.1:{closed}", "--plaintext"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert device.stdout.readline().startswith("token: ")
        said = []
        deadline = time.time() + 15
        while len(said) < 2 and time.time() < deadline:
            if select.select([device.stderr], [], [], 1)[0]:
                said.append(device.stderr.readline())
        assert len(said) == 2, said
        for line in said:
            assert line.startswith(f"herald device: cannot connect to 127.0.0.1:{closed}: "), line
            assert ": Connection refused; trying again in " in line, line
    finally:
        device.kill()
        device.wait(timeout=10)


def test_the_clients_page_is_linked_at_the_top_and_names_every_kind_of_client():
    readme = doc("README.md")
    assert readme.index("docs/guide/clients.md") < readme.index("## Set-up")
    page = doc("docs/guide/clients.md")
    for client in ["Android with Google Play services", "de-Googled Android", "iOS", "App Store", "managed",
                   "Chrome", "Edge", "Firefox", "Safari", "HeraldClient"]:
        assert client in page, client
    # The endpoints page and the APNs guide agree that the hand-off is built.
    assert "not built yet" not in doc("docs/guide/endpoints.md")


def test_the_console_pages_and_policy_are_as_the_guide_gives_them(server):
    guide = doc("docs/guide/console.md")
    policy = re.search(r"^  Content-Security-Policy: (.+)$", guide, re.M).group(1)
    addresses = re.findall(r"^\| [^|]+ \| `(/console[^`]*)`", guide, re.M)
    assert len(addresses) == 9, addresses

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    opener = urllib.request.build_opener(NoRedirect)

    def answer(path):
        try:
            with opener.open(server.url + path, timeout=5) as response:
                return response.status, response.headers
        except urllib.error.HTTPError as error:
            return error.code, error.headers

    for address in addresses:
        status, headers = answer(address.replace("/P", f"/{PROJECT}").split("?")[0])
        if address == "/console/sign-in":
            assert status == 200 and headers["Content-Security-Policy"] == policy
        else:
            assert status in (302, 303) and headers["Location"] == "/console/sign-in", (address, status)
    assert answer(f"/console/projects/{PROJECT}/no-such-page")[0] == 404


def test_a_topics_deliveries_are_counted_not_listed_unless_asked(server, tmp_path):
    # docs/EVENTS.md: without per-device-events, a topic message's one event is `accepted`.
    assert "per-device-events=true" in doc("docs/EVENTS.md")
    device = HeraldDevice(server, PROJECT, tmp_path / "device.json")
    try:
        app = herald_sdk.initialize(server.url, server.projects[PROJECT]["key_file"], name="topic-events")
        subscribed = messaging.subscribe_to_topic([device.token], "first-hour", app=app)
        assert subscribed.success_count == 1
        name = messaging.send(messaging.Message(topic="first-hour", data={"k": "v"}), app=app)
        assert device.message()["data"] == {"k": "v"}
        token = app.credential.get_access_token().access_token
        message_id = name.rsplit("/", 1)[1]
        status_url = f"{server.url}/v1/projects/{PROJECT}/messages/{urllib.parse.quote(message_id, safe='')}"
        deadline = time.time() + 10
        while True:
            request = urllib.request.Request(status_url, headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=5) as answer:
                status = json.load(answer)
            if status["counts"]["delivered"] == 1 or time.time() > deadline:
                break
            time.sleep(0.2)
        assert status["counts"]["delivered"] == 1, status
        request = urllib.request.Request(status_url + "/events", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=5) as answer:
            assert [event["type"] for event in json.load(answer)["events"]] == ["accepted"]
    finally:
        device.process.kill()
