"""Every message's story seen from outside (SEMANTICS E1-E4): the status API, the event
stream with `curl -N` and `Last-Event-ID`, and export."""
import json
import queue
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import google.auth.transport.requests
import google.oauth2.service_account
import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HeraldDevice, HeraldServer

PROJECT = "compat-events"


@pytest.fixture
def app(herald):
    return herald_sdk.initialize(herald.url, herald.projects[PROJECT]["key_file"], name="events")


def bearer(app):
    return app.credential.get_access_token().access_token


def get(herald, app, path):
    request = urllib.request.Request(f"{herald.url}{path}", headers={"Authorization": f"Bearer {bearer(app)}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def status(herald, app, message_id):
    return get(herald, app, f"/v1/projects/{PROJECT}/messages/{urllib.parse.quote(message_id, safe='')}")


def delivered(herald, app, message_id, seconds=10):
    """Waits until the message's delivery is written (acknowledgements are written in batches)."""
    deadline = time.time() + seconds
    while status(herald, app, message_id)["counts"]["delivered"] == 0:
        assert time.time() < deadline, f"{message_id} was not counted delivered"
        time.sleep(0.05)


def send(app, token, **fields):
    return messaging.send(messaging.Message(token=token, **fields), app=app).rsplit("/", 1)[1]


class Stream:
    """`curl -N` on the project's event stream: its events, parsed, in a queue."""

    def __init__(self, herald, app, *headers, query=""):
        arguments = ["curl", "-sN", "-H", f"Authorization: Bearer {bearer(app)}"]
        for header in headers:
            arguments += ["-H", header]
        self.process = subprocess.Popen(
            arguments + [f"{herald.url}/v1/projects/{PROJECT}/events:stream{query}"],
            stdout=subprocess.PIPE, text=True)
        self.events = queue.Queue()
        self.opened = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.opened.wait(10), "the stream did not open"

    def _read(self):
        frame = {}
        for line in self.process.stdout:
            line = line.rstrip("\n")
            if line.startswith(":"):
                self.opened.set()
            elif line == "":
                if frame:
                    self.events.put(frame)
                frame = {}
            else:
                name, _, value = line.partition(": ")
                frame[name] = value

    def next(self, timeout=10):
        frame = self.events.get(timeout=timeout)
        event = json.loads(frame["data"])
        assert frame["id"] == event["id"] and frame["event"] == event["type"]
        return event

    def until(self, message_id, kind, timeout=10):
        """Events up to and including `message_id`'s event of type `kind`."""
        seen = []
        deadline = time.time() + timeout
        while time.time() < deadline:
            seen.append(self.next(timeout=max(0.1, deadline - time.time())))
            if seen[-1]["message_id"] == message_id and seen[-1]["type"] == kind:
                return seen
        raise AssertionError(f"no {kind} event of {message_id} in {seen}")

    def nothing(self, seconds=1.5):
        try:
            frame = self.events.get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected event: {frame}")

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def test_E4_curl_sees_a_sends_events_live_and_after_reconnecting_exactly_the_ones_it_missed(herald, app, tmp_path):
    device = HeraldDevice(herald, PROJECT, tmp_path / "stream.json", app_id="com.example.events")
    stream = Stream(herald, app)
    try:
        first = send(app, device.token, data={"n": "1"}, fcm_options=messaging.FCMOptions(analytics_label="live"))
        assert device.message()["id"] == first
        seen = stream.until(first, "delivered")
        mine = [event for event in seen if event["message_id"] == first]
        assert [event["type"] for event in mine] == ["accepted", "delivered"]
        assert mine[1]["token"] == device.token[:8] + "…" and device.token not in json.dumps(mine)
        assert mine[1]["app"] == "com.example.events" and mine[1]["analytics_label"] == "live"
        assert mine[0]["target_kind"] == "token" and mine[0]["expire_time"]
        last = seen[-1]["id"]
        stream.close()

        missed = send(app, device.token, data={"n": "2"})
        assert device.message()["id"] == missed
        delivered(herald, app, missed)
        kept = get(herald, app, f"/v1/projects/{PROJECT}/messages/{urllib.parse.quote(missed, safe='')}/events")
        assert [event["type"] for event in kept["events"]] == ["accepted", "delivered"]

        stream = Stream(herald, app, f"Last-Event-ID: {last}")
        replay = stream.until(missed, "delivered")
        assert [event["id"] for event in replay] == [event["id"] for event in kept["events"]]
        stream.nothing()
    finally:
        stream.close()
        device.stop()


def test_E4_a_stream_filtered_by_type_and_message_sees_only_those(herald, app, tmp_path):
    device = HeraldDevice(herald, PROJECT, tmp_path / "filter.json", app_id="com.example.events")
    try:
        first = send(app, device.token, data={"n": "1"})
        assert device.message()["id"] == first
        delivered(herald, app, first)
        # Resumed from before the send: only its delivered event passes the filter.
        stream = Stream(
            herald, app, "Last-Event-ID: 0",
            query=f"?type=delivered&message_id={urllib.parse.quote(first, safe='')}")
        event = stream.next()
        assert event["type"] == "delivered" and event["message_id"] == first
        stream.nothing()
        stream.close()
        refused = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
             f"{herald.url}/v1/projects/{PROJECT}/events:stream"], capture_output=True, text=True, timeout=10)
        assert refused.stdout == "401"
    finally:
        device.stop()


def test_E3_the_status_of_a_token_message_and_of_one_whose_time_to_live_passed(herald, app, tmp_path):
    device = HeraldDevice(herald, PROJECT, tmp_path / "status.json", app_id="com.example.events")
    token = device.token
    device.stop()
    waiting = send(app, token, data={"n": "1"})
    brief = send(app, token, data={"n": "2"}, android=messaging.AndroidConfig(ttl=1))
    answer = status(herald, app, waiting)
    assert answer["state"] == "delivering" and answer["waiting"] == 1
    assert answer["target"] == {"kind": "token", "value": token[:8] + "…"}
    time.sleep(1.5)
    assert status(herald, app, brief)["state"] == "expired"
    device = HeraldDevice(herald, PROJECT, tmp_path / "status.json", app_id="com.example.events")
    try:
        assert device.message()["id"] == waiting
        delivered(herald, app, waiting)
        done = status(herald, app, waiting)
        assert done["state"] == "done" and done["counts"]["delivered"] == 1 and done["waiting"] == 0
    finally:
        device.stop()
    with pytest.raises(urllib.error.HTTPError) as missing:
        status(herald, app, "0:1%00")
    assert missing.value.code == 404
    assert json.load(missing.value)["error"]["status"] == "NOT_FOUND"


def test_E5_export_writes_json_lines_of_a_window(herald, app, tmp_path):
    device = HeraldDevice(herald, PROJECT, tmp_path / "export.json", app_id="com.example.events")
    try:
        since = int(time.time() * 1000)
        sent = send(app, device.token, data={"n": "1"})
        assert device.message()["id"] == sent
        delivered(herald, app, sent)
        output = tmp_path / "events.jsonl"
        herald.cli("events", "export", "--project", PROJECT, "--since", str(since), "--output", str(output))
        rows = [json.loads(line) for line in output.read_text().splitlines()]
        assert [row["type"] for row in rows if row["message_id"] == sent] == ["accepted", "delivered"]
        assert all(set(row) == set(rows[0]) for row in rows)
        assert all(row["time_ms"] >= since for row in rows)
        assert all(row["project"] == PROJECT for row in rows)
    finally:
        device.stop()


def test_E4_an_open_stream_does_not_hold_up_shutdown():
    server = HeraldServer()
    try:
        key_file = server.create_project(PROJECT)["key_file"]
        server.start()
        credentials = google.oauth2.service_account.Credentials.from_service_account_file(
            key_file, scopes=["https://www.googleapis.com/auth/firebase.messaging"])
        credentials.refresh(google.auth.transport.requests.Request())
        curl = subprocess.Popen(
            ["curl", "-sN", "-H", f"Authorization: Bearer {credentials.token}",
             f"{server.url}/v1/projects/{PROJECT}/events:stream"], stdout=subprocess.PIPE, text=True)
        assert curl.stdout.readline().startswith(":")
        started = time.time()
        server.process.terminate()
        server.process.wait(timeout=15)
        assert time.time() - started < 8
        curl.wait(timeout=5)
    finally:
        server.stop()
