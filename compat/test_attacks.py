"""The attacks a hostile client made against a release build, made again against a live
Herald: each must be refused and change nothing. An installation taken over with the public
API key, a data directory readable by other users, an access token forged with the real
secret to live ten years, oversized and newline-carrying register3 fields, receipts forged
by another device, an assertion for another audience, a bad MCS version byte, and metrics
without their token. The server starts under umask 000."""
import base64
import hashlib
import hmac
import json
import os
import socket
import sqlite3
import ssl
import stat
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import google.auth.crypt
import google.auth.jwt
import pytest
from fcm_receiver.proto_manual import put_uvarint as varint
from firebase_admin import messaging

import herald_sdk
from conftest import HERALD, HeraldServer
from test_real_clients import Receiver

PROJECT = "attacks"
METRICS_TOKEN = "metrics-" + base64.urlsafe_b64encode(os.urandom(12)).decode()


@pytest.fixture(scope="module")
def server():
    herald = HeraldServer()
    previous = os.umask(0)
    try:
        herald.projects = {PROJECT: herald.create_project(PROJECT)}
        herald.start("--metrics-token", METRICS_TOKEN, "--log-level", "debug")
    finally:
        os.umask(previous)
    yield herald
    herald.stop()


@pytest.fixture
def app(server):
    return herald_sdk.initialize(server.url, server.projects[PROJECT]["key_file"], name="attacks")


def request(url, body=None, headers=None, method=None):
    """Answers (status, body bytes) without raising on HTTP errors."""
    data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers or {}, method=method),
                                    timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_the_data_directory_is_private_after_a_start_under_umask_000(server):
    assert stat.S_IMODE(os.stat(server.data_dir).st_mode) == 0o700
    for folder, folders, files in os.walk(server.data_dir):
        for name in folders:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o700, name
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600, name
    assert "herald.sqlite" in os.listdir(server.data_dir)
    key_file = server.projects[PROJECT]["key_file"]
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600


def test_an_installation_cannot_be_taken_over_with_the_api_key(server):
    project = server.projects[PROJECT]
    url = f"{server.url}/v1/projects/{PROJECT}/installations"
    headers = {"x-goog-api-key": project["api_key"], "Content-Type": "application/json"}
    fid = "cVictimInstallation01"
    status, body = request(url, {"fid": fid, "appId": "1:1:android:1", "authVersion": "FIS_v2"}, headers)
    victim = json.loads(body)
    assert status == 200 and victim["fid"] == fid
    status, body = request(url, {"fid": fid, "appId": "1:1:android:1", "authVersion": "FIS_v2"}, headers)
    assert status == 200 and json.loads(body)["fid"] != fid  # a fresh id, not the victim's
    status, _ = request(f"{url}/{fid}/authTokens:generate", {},
                        {**headers, "Authorization": f"FIS_v2 {victim['refreshToken']}"})
    assert status == 200  # the victim's installation is untouched


def forged_access_token(server, lifetime):
    """An access token signed with the real secret, read from the store as a local user
    could have when the store was world-readable."""
    database = sqlite3.connect(os.path.join(server.data_dir, "herald.sqlite"))
    secret = database.execute("SELECT value FROM secrets WHERE name = 'access-token-hmac'").fetchone()[0]
    database.close()
    now = int(time.time())
    payload = b64url(f"{PROJECT}|{server.projects[PROJECT]['key_id']}|{now}|{now + lifetime}".encode())
    mac = hmac.new(secret, f"ya29.h1.{payload}".encode(), hashlib.sha256).digest()
    return f"ya29.h1.{payload}.{b64url(mac)}"


def dry_run(server, token):
    return request(f"{server.url}/v1/projects/{PROJECT}/messages:send",
                   {"message": {"topic": "news"}, "validate_only": True},
                   {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})[0]


def test_a_correctly_signed_ten_year_access_token_is_refused(server):
    assert dry_run(server, forged_access_token(server, 3600)) == 200  # the forgery itself is right
    assert dry_run(server, forged_access_token(server, 10 * 365 * 86400)) == 401


def test_a_rotated_signing_secret_ends_tokens_signed_with_the_old_one(server, app):
    old_token = forged_access_token(server, 3600)
    subprocess.run([HERALD, "project", "rotate-secret", "--data-dir", server.data_dir], check=True,
                   capture_output=True, timeout=60)
    time.sleep(1.5)  # running servers reload within a second
    assert dry_run(server, old_token) == 200  # still within the hour of overlap
    assert forged_access_token(server, 3600) != old_token
    assert dry_run(server, forged_access_token(server, 3600)) == 200
    # The SDK's own token flow keeps working across the rotation.
    assert messaging.send(messaging.Message(topic="news"), dry_run=True, app=app).endswith("fake_message_id")


def checked_in_device(server):
    from fcm_receiver import http_client
    from fcm_receiver.fcm_client import FCMClient

    http_client.CHECKIN_URL = f"{server.url}/checkin"
    return http_client.send_gcm_checkin_request(FCMClient()._build_checkin_request())


def test_an_oversized_or_newline_carrying_app_is_refused_and_reaches_neither_store_nor_log(server):
    android_id, security_token = checked_in_device(server)
    number = server.projects[PROJECT]["number"]
    forged_line = "2026-11-26T00:00:00+0000 critical herald: forged"
    for app in ("a" * 100_000, f"com.example\n{forged_line}", "com.example\x1b[2J"):
        status, body = request(
            f"{server.url}/c2dm/register3", urllib.parse.urlencode({"app": app, "sender": number}).encode(),
            {"Authorization": f"AidLogin {android_id}:{security_token}",
             "Content-Type": "application/x-www-form-urlencoded"})
        assert (status, body) == (400, b"Error=INVALID_PARAMETERS")
    with open(os.path.join(server.directory, "serve.log"), encoding="utf-8", errors="replace") as log:
        text = log.read()
    assert not any(line.startswith(forged_line) for line in text.splitlines())
    assert "\x1b" not in text
    assert os.path.getsize(os.path.join(server.directory, "serve.log")) < 10_000_000


def mcs_frame(tag, payload):
    return bytes([tag]) + varint(len(payload)) + payload


def receipt(message_id):
    """An IqStanza (tag 7) of type SET carrying Herald's receipt extension 1002."""
    data = f"opened {message_id}".encode()
    extension = b"\x08" + varint(1002) + b"\x12" + varint(len(data)) + data
    return mcs_frame(7, b"\x10\x01" + b"\x1a\x00" + b"\x3a" + varint(len(extension)) + extension)


def gateway_socket(server):
    context = ssl.create_default_context(cafile=server.ca_file)
    return context.wrap_socket(socket.create_connection(("127.0.0.1", server.gateway_port), timeout=10),
                               server_hostname="127.0.0.1")


def opened_count(server):
    output = subprocess.run([HERALD, "stats", PROJECT, "--days", "1", "--data-dir", server.data_dir],
                            capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    header = output[0].split("\t")
    return sum(int(line.split("\t")[header.index("opened")]) for line in output[1:])


def test_receipts_forged_by_another_device_of_the_project_do_not_count(server, app):
    victim = Receiver(server, server.projects[PROJECT])
    token, _, _, _ = victim.client.register()
    victim.client.start_listening()
    try:
        name = messaging.send(messaging.Message(token=token, notification=messaging.Notification("t", "b")), app=app)
        victim.message()
    finally:
        victim.client.close()
    attacker = Receiver(server, server.projects[PROJECT])
    attacker.client.register()  # a device of the same project
    sock = gateway_socket(server)
    sock.sendall(attacker.client._build_login_request_packet())
    assert sock.recv(1)  # the login response starts
    message_id = name.rsplit("/", 1)[1]
    sock.sendall(b"".join(receipt(message_id) for _ in range(300)))
    time.sleep(1.5)
    sock.close()
    assert opened_count(server) == 0


def test_an_assertion_for_another_audience_is_refused(server):
    key_file = server.projects[PROJECT]["key_file"]
    info = json.load(open(key_file))
    signer = google.auth.crypt.RSASigner.from_service_account_file(key_file)
    now = int(time.time())

    def exchange(audience):
        assertion = google.auth.jwt.encode(signer, {
            "iss": info["client_email"], "scope": "https://www.googleapis.com/auth/firebase.messaging",
            "aud": audience, "iat": now, "exp": now + 3600}).decode()
        return request(f"{server.url}/token", urllib.parse.urlencode({
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}).encode(),
            {"Content-Type": "application/x-www-form-urlencoded"})

    status, body = exchange("https://evil.example/token")
    assert status == 400 and json.loads(body)["error"] == "invalid_grant"
    assert exchange(f"{server.url}/token")[0] == 200  # the key file's own token_uri
    assert exchange("https://oauth2.googleapis.com/token")[0] == 200  # what google-auth sends


def test_a_bad_mcs_version_byte_is_closed(server):
    for version in (0xFF, 0x2A, 0x25):
        sock = gateway_socket(server)
        sock.sendall(bytes([version, 2, 0]))
        sock.settimeout(5)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        # Closed, with the reason in Herald's close stanza.
        assert f"unsupported MCS version {version}".encode() in answer
        sock.close()


def test_metrics_need_their_token(server):
    assert request(f"{server.url}/metrics")[0] == 401
    assert request(f"{server.url}/metrics", headers={"Authorization": "Bearer wrong"})[0] == 401
    status, body = request(f"{server.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert status == 200 and b"herald_" in body
