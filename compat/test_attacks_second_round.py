"""The second round of attacks a hostile client made against a release build, made again
against a live Herald: each must be refused and change nothing. A Web Push channel
restricted to a site key bound to another project, installations and registrations that
fill the store, a flood of receipts, an assertion for another host carried by that host's
name, receipts counted from devices a message never reached, another sender's receipt
subscription, a Matrix notification naming one pushkey many times, sign-in guesses in a
burst, and a data key with U+0000."""
import base64
import concurrent.futures
import json
import os
import re
import sqlite3
import subprocess
import time
import urllib.parse
import uuid

import google.auth.crypt
import google.auth.jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from firebase_admin import exceptions, messaging
from py_vapid import Vapid
from pywebpush import WebPushException, webpush

import herald_sdk
from conftest import HERALD, HeraldDevice, HeraldServer, free_port, serving
from test_attacks import b64url, checked_in_device, gateway_socket, receipt, request
from test_real_clients import Receiver

ALPHA = "round-alpha"
BETA = "round-beta"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
FIREBASE_DEFAULT_KEY = "BDOU99-h67HcA6JeFXHbSNMu7e2yNNu3RzoMj8TM4W88jITfq7ZmPvIM1Iv-4_l2LxQcYwhqby2xGpWwzjfAnG4"
CONSOLE_PASSWORD = "the right console password"


@pytest.fixture(scope="module")
def server():
    def console_user(herald):
        subprocess.run([HERALD, "console", "add-user", "guarded", "--project", ALPHA, "--data-dir", herald.data_dir],
                       input=CONSOLE_PASSWORD + "\n", text=True, check=True, capture_output=True, timeout=60)

    with serving((ALPHA, BETA), prepare=console_user) as herald:
        yield herald


def rows(server, table):
    database = sqlite3.connect(f"file:{os.path.join(server.data_dir, 'herald.sqlite')}?mode=ro", uri=True)
    try:
        return database.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        database.close()


def public_key():
    raw = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return b64url(raw)


def web_channel(server, sender):
    """A browser's push channel made for `sender`, as Chromium's register3 makes it; answers
    the device's check-in credentials and the channel's endpoint."""
    android_id, security_token = checked_in_device(server)
    status, body = request(
        f"{server.url}/c2dm/register3",
        urllib.parse.urlencode({"app": "org.chromium.linux", "X-subtype": f"wp:https://site.example/#{uuid.uuid4()}",
                                "device": android_id, "sender": sender}).encode(),
        {"Authorization": f"AidLogin {android_id}:{security_token}", **FORM})
    assert status == 200, body
    return android_id, security_token, "https://fcm.googleapis.com/fcm/send/" + body.decode().split("token=")[1].strip()


def bind_by_form(server, project, endpoint, headers=None):
    return request(f"{server.url}/fcm/connect/subscribe", urllib.parse.urlencode({
        "authorized_entity": project["number"], "endpoint": endpoint, "encryption_key": public_key(),
        "encryption_auth": b64url(os.urandom(16))}).encode(), {**FORM, **(headers or {})})


def bind_by_registration(server, project, endpoint, application_key=None, headers=None):
    """As Firebase's web SDK binds a subscription: an installation, then a registration."""
    api = {"x-goog-api-key": project["api_key"], "Content-Type": "application/json"}
    status, body = request(f"{server.url}/v1/projects/{project['id']}/installations",
                           {"appId": f"1:{project['number']}:web:site", "authVersion": "FIS_v2"}, api)
    assert status == 200, body
    web = {"endpoint": endpoint, "p256dh": public_key(), "auth": b64url(os.urandom(16))}
    if application_key:
        web["applicationPubKey"] = application_key
    return request(f"{server.url}/v1/projects/{project['id']}/registrations", {"web": web},
                   {**api, "x-goog-firebase-installations-auth": json.loads(body)["authToken"]["token"],
                    **(headers or {})})


def test_1_a_channel_restricted_to_a_site_key_binds_only_to_a_project_holding_that_key(server):
    alpha, beta = server.projects[ALPHA], server.projects[BETA]
    site_key = public_key()
    android_id, security_token, endpoint = web_channel(server, site_key)
    before = rows(server, "registrations")
    # Without credentials, for a project that does not hold the site key: refused either way.
    assert bind_by_form(server, beta, endpoint)[0] == 403
    status, body = bind_by_registration(server, beta, endpoint)
    assert status == 403 and json.loads(body)["error"]["status"] == "PERMISSION_DENIED"
    assert bind_by_registration(server, beta, endpoint, application_key=site_key)[0] == 403
    assert bind_by_form(server, alpha, endpoint)[0] == 403
    assert rows(server, "registrations") == before
    # The project that holds the key binds it, naming the key as the web SDK does.
    server.cli("project", "set", ALPHA, f"web-push-keys={site_key}")
    assert f"web-push-keys = {site_key}" in server.cli("project", "show", ALPHA)
    time.sleep(1.5)  # a running server reads settings within a second
    assert bind_by_registration(server, alpha, endpoint, application_key=public_key())[0] == 403  # not its key
    assert bind_by_registration(server, alpha, endpoint, application_key=site_key)[0] == 200
    assert bind_by_form(server, alpha, endpoint)[0] == 200
    assert bind_by_form(server, beta, endpoint)[0] == 403
    # The channel's own device may bind it anywhere: it proves itself with its check-in.
    owner = {"Authorization": f"AidLogin {android_id}:{security_token}"}
    assert bind_by_form(server, beta, endpoint, headers=owner)[0] == 200
    assert bind_by_form(server, beta, endpoint, headers={"Authorization": f"AidLogin {android_id}:1"})[0] == 403


def test_1_a_channel_for_firebases_default_key_belongs_to_the_first_project_that_binds_it(server):
    alpha, beta = server.projects[ALPHA], server.projects[BETA]
    _, _, endpoint = web_channel(server, FIREBASE_DEFAULT_KEY)
    assert bind_by_registration(server, alpha, endpoint)[0] == 200
    before = rows(server, "registrations")
    assert bind_by_registration(server, beta, endpoint)[0] == 403
    assert bind_by_form(server, beta, endpoint)[0] == 403
    assert rows(server, "registrations") == before
    assert bind_by_registration(server, alpha, endpoint)[0] == 200  # its own project again


def test_2_an_installation_with_an_oversized_or_odd_app_id_is_refused_and_stores_nothing(server):
    project = server.projects[ALPHA]
    url = f"{server.url}/v1/projects/{ALPHA}/installations"
    headers = {"x-goog-api-key": project["api_key"], "Content-Type": "application/json"}
    before = rows(server, "installations")
    for app_id in ("1:1:android:" + "a" * 1_000_000, "1:1:android:" + "a" * 200, "1:1:android:a\nforged", ""):
        status, _ = request(url, {"appId": app_id, "authVersion": "FIS_v2"}, headers)
        assert status == 400
    status, _ = request(url, {"appId": "1:1:android:1", "authVersion": "FIS_v2", "sdkVersion": "x" * 10_000}, headers)
    assert status == 400  # the whole request is bounded too
    assert rows(server, "installations") == before
    assert request(url, {"appId": f"1:{project['number']}:android:0a1b2c", "authVersion": "FIS_v2"}, headers)[0] == 200


def test_3_upstream_messages_are_not_storage(server, tmp_path):
    device = HeraldDevice(server, BETA, tmp_path / "upstream.json", app_id="com.example.upstream")
    try:
        before = rows(server, "upstream_messages")
        long_id = "i" * 60_000
        device.command(f"upstream {long_id} ttl:2419200 k=v")
        assert device.line(30) == f"send-error: {long_id} InvalidParameters"
        assert rows(server, "upstream_messages") == before
        server.cli("project", "set", BETA, "upstream-waiting=3")
        time.sleep(1.5)  # a running server reads settings within a second
        for index in range(3):
            device.command(f"upstream kept-{index} k=v")
            assert device.line() == f"sent: kept-{index}"
        device.command("upstream one-too-many k=v")
        assert device.line() == "send-error: one-too-many TooManyMessages"
        assert rows(server, "upstream_messages") == before + 3
    finally:
        server.cli("project", "set", BETA, "upstream-waiting=10000")
        device.stop()


def server_cpu_seconds(server):
    fields = open(f"/proc/{server.process.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_rss_mb(server):
    for line in open(f"/proc/{server.process.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0


def test_4_a_flood_of_receipts_for_unknown_messages_costs_little_and_stalls_no_one(server):
    attacker = Receiver(server, server.projects[BETA])
    attacker.client.register()
    sock = gateway_socket(server)
    sock.sendall(attacker.client._build_login_request_packet())
    assert sock.recv(1)
    cpu, rss = server_cpu_seconds(server), server_rss_mb(server)
    flood = b"".join(receipt(f"0:{index}%unknown") for index in range(100_000))
    started = time.time()
    sock.sendall(flood)
    # Another project's send is answered while the flood is read.
    app = herald_sdk.initialize(server.url, server.projects[ALPHA]["key_file"], name="flood")
    sent = time.time()
    assert messaging.send(messaging.Message(topic="news"), dry_run=True, app=app).endswith("fake_message_id")
    assert time.time() - sent < 2.0
    time.sleep(max(0.0, 3.0 - (time.time() - started)))
    sock.close()
    used = server_cpu_seconds(server) - cpu
    grown = server_rss_mb(server) - rss
    print(f"100,000 receipts: {used:.2f} s of server CPU, RSS +{grown:.1f} MB")
    assert used < 6.0  # it was 12 s in a release build, 10 store reads a receipt
    assert grown < 60


def test_5_an_assertion_for_another_host_is_refused_whatever_host_the_request_names(server):
    key_file = server.projects[ALPHA]["key_file"]
    info = json.load(open(key_file))
    signer = google.auth.crypt.RSASigner.from_service_account_file(key_file)
    now = int(time.time())

    def signed(claims):
        return google.auth.jwt.encode(signer, {
            "iss": info["client_email"], "sub": info["client_email"], "iat": now, "exp": now + 3600,
            "scope": "https://www.googleapis.com/auth/firebase.messaging", **claims}).decode()

    assertion = signed({"aud": "https://other.example/token"})
    status, body = request(f"{server.url}/token", urllib.parse.urlencode({
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}).encode(),
        {**FORM, "Host": "other.example"})
    assert status == 400 and json.loads(body)["error"] == "invalid_grant"
    bearer = signed({"aud": "https://other.example/"})
    status, _ = request(f"{server.url}/v1/projects/{ALPHA}/messages:send",
                        {"message": {"topic": "news"}, "validate_only": True},
                        {"Authorization": f"Bearer {bearer}", "Content-Type": "application/json",
                         "Host": "other.example"})
    assert status == 401
    # Its own public URL is still an audience.
    assert request(f"{server.url}/v1/projects/{ALPHA}/messages:send",
                   {"message": {"topic": "news"}, "validate_only": True},
                   {"Authorization": f"Bearer {signed({'aud': server.url})}",
                    "Content-Type": "application/json"})[0] == 200


def test_7_a_burst_of_sign_in_guesses_is_checked_one_at_a_time(server):
    page = f"{server.url}/console/sign-in"
    status, body = request(page)
    assert status == 200
    csrf = re.search(rb'name="csrf" value="([^"]+)"', body).group(1).decode()

    def attempt(password):
        import urllib.request
        opener = urllib.request.build_opener()
        opener.addheaders = [("Cookie", f"herald_console_sign_in={csrf}")]
        form = urllib.parse.urlencode({"csrf": csrf, "name": "guarded", "password": password}).encode()
        try:
            with opener.open(urllib.request.Request(page, data=form, headers=FORM), timeout=60) as response:
                return response.status, response.geturl()
        except urllib.error.HTTPError as error:
            return error.code, page

    guesses = [f"guess {index}" for index in range(30)] + [CONSOLE_PASSWORD]
    with concurrent.futures.ThreadPoolExecutor(len(guesses)) as pool:
        answers = list(pool.map(attempt, guesses))
    refused = sum(1 for status, _ in answers if status == 429)
    checked = len(answers) - refused
    print(f"{len(answers)} concurrent attempts: {checked} checked, {refused} refused unchecked")
    assert refused >= len(answers) - 3
    # In a sequence each failure makes the next answer wait longer: the sign-in is slowed.
    started = time.time()
    for index in range(3):
        assert attempt(f"sequential {index}")[0] in (200, 401)  # the form again, saying it was wrong
    assert time.time() - started >= 1.0


def test_10_an_open_counts_only_from_a_device_the_message_reached(server):
    project = server.projects[BETA]
    app = herald_sdk.initialize(server.url, project["key_file"], name="opens")
    topic = f"opens-{uuid.uuid4().hex[:8]}"
    reached = Receiver(server, project)
    token, _, _, _ = reached.client.register()
    messaging.subscribe_to_topic([token], topic, app=app)
    reached.client.start_listening()
    try:
        name = messaging.send(messaging.Message(topic=topic, data={"k": "v"}), app=app)
        reached.message()
    finally:
        reached.client.close()
    message_id = name.rsplit("/", 1)[1]
    late = []
    for _ in range(5):
        receiver = Receiver(server, project)
        late_token, _, _, _ = receiver.client.register()
        messaging.subscribe_to_topic([late_token], topic, app=app)
        late.append(receiver)
    for device in [reached] + late:
        sock = gateway_socket(server)
        sock.sendall(device.client._build_login_request_packet())
        assert sock.recv(1)
        sock.sendall(receipt(message_id))
        time.sleep(0.3)
        sock.close()
    time.sleep(1.5)
    output = server.cli("stats", BETA, "--days", "1").splitlines()
    header = output[0].split("\t")
    assert sum(int(line.split("\t")[header.index("opened")]) for line in output[1:]) == 1


@pytest.fixture(scope="module")
def senders():
    keys = []
    for _ in range(2):
        key = Vapid()
        key.generate_keys()
        keys.append(key)
    return keys


def vapid_key(vapid):
    return b64url(vapid.public_key.public_bytes(serialization.Encoding.X962,
                                               serialization.PublicFormat.UncompressedPoint))


def subscribed_device(server, tmp_path, name, vapid):
    flags = ["--web-push"] + (["--application-server-key", vapid_key(vapid)] if vapid else [])
    device = HeraldDevice(server, ALPHA, tmp_path / f"{name}.json", *flags)
    endpoint = device.line().split(": ", 1)[1]
    return device, {"endpoint": endpoint, "keys": json.loads(device.line().split(": ", 1)[1])}


def test_12_a_push_receipt_names_only_a_receipt_subscription_of_the_same_sender(server, senders, tmp_path):
    victim, attacker = senders
    first, first_subscription = subscribed_device(server, tmp_path, "victim", victim)
    second, second_subscription = subscribed_device(server, tmp_path, "attacker", attacker)
    claims = {"sub": "mailto:ops@example.com"}
    try:
        answer = webpush(first_subscription, data="v", vapid_private_key=victim, vapid_claims=dict(claims),
                         headers={"Prefer": "respond-async"}, ttl=60)
        receipts_url = answer.headers["Link"].split(";", 1)[0].strip("<> ")
        with pytest.raises(WebPushException) as refused:
            webpush(second_subscription, data="forged", vapid_private_key=attacker, vapid_claims=dict(claims),
                    headers={"Push-Receipt": receipts_url}, ttl=60)
        assert refused.value.response.status_code == 400
        again = webpush(first_subscription, data="v2", vapid_private_key=victim, vapid_claims=dict(claims),
                        headers={"Push-Receipt": receipts_url}, ttl=60)
        assert again.status_code == 201  # its own sender may name it
    finally:
        first.stop()
        second.stop()


def test_11_long_polls_of_receipts_are_capped_per_address_and_woken_by_the_receipt(server, senders, tmp_path):
    import urllib.request
    subscription = b64url(os.urandom(32))

    def poll(wait):
        started = time.time()
        read = urllib.request.Request(f"{server.url}/wp/r/{subscription}", headers={"Prefer": f"wait={wait}"})
        with urllib.request.urlopen(read, timeout=wait + 10) as response:
            assert json.loads(response.read())["receipts"] == []
        return time.time() - started

    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        durations = sorted(pool.map(poll, [4] * 20))
    assert sum(1 for duration in durations if duration < 2) >= 12  # past 8 waits, answered at once
    assert sum(1 for duration in durations if duration >= 3.5) <= 8
    # A read waiting for a receipt returns as the device acknowledges.
    sender = senders[0]
    device, web = subscribed_device(server, tmp_path, "receipts", sender)
    try:
        answer = webpush(web, data="r", vapid_private_key=sender, vapid_claims={"sub": "mailto:ops@example.com"},
                         headers={"Prefer": "respond-async"}, ttl=60)
        url = answer.headers["Link"].split(";", 1)[0].strip("<> ")
        device.message()
        started = time.time()
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Prefer": "wait=20"}), timeout=30) as response:
            assert len(json.loads(response.read())["receipts"]) == 1
        assert time.time() - started < 10
    finally:
        device.stop()


def test_13_a_matrix_notification_pushes_each_pushkey_once_and_only_for_an_app_id(server, tmp_path):
    device, subscription = subscribed_device(server, tmp_path, "matrix", None)
    gateway = subscription["endpoint"].rsplit("/wp/", 1)[0] + "/_matrix/push/v1/notify"
    try:
        def notify(devices):
            notification = {"event_id": "$e", "room_id": "!r:example.org", "prio": "high", "devices": devices}
            return request(gateway, {"notification": notification}, {"Content-Type": "application/json"})

        assert notify([{"app_id": "im.vector.app", "pushkey": subscription["endpoint"]}] * 30)[0] == 200
        device.message()
        device.nothing(2)
        assert notify([{"pushkey": subscription["endpoint"]}, {"app_id": "x" * 65, "pushkey": subscription["endpoint"]}])[0] == 200
        device.nothing(2)
    finally:
        device.stop()


def test_14_a_repeated_register3_keeps_its_token_and_re_check_ins_are_bounded(server):
    android_id, security_token = checked_in_device(server)
    auth = {"Authorization": f"AidLogin {android_id}:{security_token}", **FORM}
    form = urllib.parse.urlencode({"app": "com.example.repeat", "sender": server.projects[ALPHA]["number"],
                                   "device": android_id}).encode()
    first = request(f"{server.url}/c2dm/register3", form, auth)
    before = rows(server, "registrations")
    for _ in range(20):
        assert request(f"{server.url}/c2dm/register3", form, auth) == first
    assert rows(server, "registrations") == before
    from fcm_receiver import http_client
    from fcm_receiver.fcm_client import FCMClient
    client = FCMClient()
    client.android_id, client.security_token = android_id, security_token
    checkin = http_client.marshal_android_checkin_request(client._build_checkin_request())
    answers = []
    for _ in range(15):
        answers.append(request(f"{server.url}/checkin", checkin, {"Content-Type": "application/x-protobuf"})[0])
    assert answers[0] == 200 and 429 in answers


def test_14_console_pages_are_not_framed_and_send_no_referrer(server):
    import urllib.request
    with urllib.request.urlopen(f"{server.url}/console/sign-in", timeout=10) as response:
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Referrer-Policy"] == "no-referrer"


def test_14_a_data_key_with_u0000_is_refused(server):
    app = herald_sdk.initialize(server.url, server.projects[ALPHA]["key_file"], name="nul")
    with pytest.raises(exceptions.InvalidArgumentError):
        messaging.send(messaging.Message(topic="news", data={"a\u0000b": "v"}), dry_run=True, app=app)


def test_6_connections_that_never_authenticate_are_bounded_per_address_and_closed_soon(tmp_path):
    import socket
    herald = HeraldServer()
    xmpp = free_port()
    herald.projects = {ALPHA: herald.create_project(ALPHA)}
    herald.start("--xmpp-plaintext-port", str(xmpp), "--unauthenticated-connections-per-address", "200")
    sockets = []
    try:
        header = (b"<stream:stream to='fcm.googleapis.com' version='1.0' xmlns='jabber:client' "
                  b"xmlns:stream='http://etherx.jabber.org/streams'>")
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", xmpp), timeout=5)
            sock.sendall(header)
            sockets.append(sock)
        time.sleep(1)

        def closed(sock):
            sock.settimeout(0.05)
            try:
                while chunk := sock.recv(65536):
                    if b"</stream:stream>" in chunk:
                        return True
                return True
            except (socket.timeout, BlockingIOError):
                return False
            except OSError:
                return True

        refused = sum(closed(sock) for sock in sockets)
        assert refused >= 100, refused  # past 200 from this address, closed at once
        # Healthy clients are still served: HTTP and a device's login on the gateway.
        started = time.time()
        assert request(f"{herald.url}/healthz")[0] == 200
        assert time.time() - started < 1.0
        device = Receiver(herald, herald.projects[ALPHA])
        device.client.register()
        gateway = gateway_socket(herald)
        gateway.sendall(device.client._build_login_request_packet())
        assert gateway.recv(1)
        gateway.close()
        # Those that never authenticate are closed after the login time (10 s).
        time.sleep(11)
        assert all(closed(sock) for sock in sockets)
    finally:
        for sock in sockets:
            sock.close()
        herald.stop()


def test_9_a_drop_in_server_stops_on_sigterm_after_http2_load_and_silent_connections(tmp_path):
    import shutil
    import signal
    import socket
    herald = HeraldServer()
    port = free_port()
    herald.projects = {ALPHA: herald.create_project(ALPHA)}
    herald.start("--drop-in", "--drop-in-port", str(port), "--drop-in-hostname", "127.0.0.1",
                 "--xmpp-port", str(free_port()))
    try:
        app = herald_sdk.initialize(herald.url, herald.projects[ALPHA]["key_file"], name="h2load")
        token = app.credential.get_access_token().access_token
        body = tmp_path / "body.json"
        body.write_text(json.dumps({"message": {"topic": "news", "data": {"k": "v"}}}))
        assert shutil.which("h2load"), "scripts/test installs nghttp2-client"
        load = subprocess.run(
            ["h2load", "-n", "2000", "-c", "4", "-m", "100", "-d", str(body), "-H", "content-type: application/json",
             "-H", f"authorization: Bearer {token}",
             f"https://127.0.0.1:{port}/v1/projects/{ALPHA}/messages:send"],
            capture_output=True, text=True, timeout=120)
        # Every stream answered (a send past a quota would be a 429, which is an answer too).
        assert "2000 done" in load.stdout and "0 errored" in load.stdout, load.stdout
        # A connection closed before its client hello, and one that stays silent.
        socket.create_connection(("127.0.0.1", port)).close()
        silent = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.5)
        herald.process.send_signal(signal.SIGTERM)
        herald.process.wait(timeout=20)  # the drain deadline, not forever
        silent.close()
    finally:
        herald.stop()
