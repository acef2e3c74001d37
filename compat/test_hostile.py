"""Hostile and careless clients against a live Herald: the OpenAPI description driven by
schemathesis, slow clients (slowloris) on HTTP and on the device gateway, 100 MB bodies
and frames, and 10,000 gateway connections that never log in. Herald must answer
well-behaved clients meanwhile, never answer 5xx, and drop the abusers within its
deadlines. The server here runs with short deadlines (2 s) so that the test is quick.
"""
import asyncio
import glob
import json
import os
import re
import resource
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import google.auth.transport.requests
import pytest
from firebase_admin import messaging
from google.oauth2 import service_account

import herald_sdk
from conftest import HERALD, ROOT, HeraldServer
from test_devices import receiver, wait_for

DEADLINE = 2  # --http-head-timeout, --http-body-timeout, --login-timeout


@pytest.fixture(scope="module")
def server():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    herald = HeraldServer()
    # receiver() in test_devices registers into the project of this name.
    herald.projects = {"compat-devices": herald.create_project("compat-devices")}
    herald.start("--http-head-timeout", str(DEADLINE), "--http-body-timeout", str(DEADLINE),
                 "--login-timeout", str(DEADLINE))
    # The SDK redirections are process-wide: put back what the other modules' server set.
    from firebase_messaging import fcmpushclient, fcmregister
    saved = ([(module, name, getattr(module, name)) for module, name in (
        (messaging._MessagingService, "IID_URL"), (fcmregister, "GCM_CHECKIN_URL"),
        (fcmregister, "GCM_REGISTER_URL"), (fcmregister, "FCM_INSTALLATION"), (fcmregister, "FCM_REGISTRATION"),
        (fcmpushclient, "MCS_HOST"), (fcmpushclient, "MCS_PORT"))], os.environ.get("SSL_CERT_FILE"))
    yield herald
    herald.stop()
    for module, name, value in saved[0]:
        setattr(module, name, value)
    if saved[1] is None:
        os.environ.pop("SSL_CERT_FILE", None)
    else:
        os.environ["SSL_CERT_FILE"] = saved[1]


def access_token(project):
    credentials = service_account.Credentials.from_service_account_file(
        project["key_file"], scopes=["https://www.googleapis.com/auth/firebase.messaging"])
    credentials.refresh(google.auth.transport.requests.Request())
    return credentials.token


def resident_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


def healthy(url, timeout=2):
    started = time.monotonic()
    with urllib.request.urlopen(f"{url}/healthz", timeout=timeout) as response:
        assert response.status == 200
    return time.monotonic() - started


def closed_by_server(sock, within):
    """True when the server closes the connection (EOF or reset) within `within` seconds."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


# ------------------------------------------------------------------ OpenAPI


def routes_in_sources():
    """Every path the router serves, from the route registrations in Sources/HeraldHTTP."""
    paths = set()
    for source in glob.glob(os.path.join(ROOT, "Sources", "HeraldHTTP", "*.swift")):
        text = open(source).read()
        base = re.search(r'let base = "([^"]+)"', text)
        for match in re.finditer(r'router\.(?:get|post|put|patch|delete)\(([^{]+?)\)\s*\{', text):
            argument = match.group(1)
            literal = re.search(r'"([^"]+)"', argument)
            path = (base.group(1) if base and "base" in argument else "") + (literal.group(1) if literal else "")
            paths.add(re.sub(r"/:(\w+)", r"/{\1}", path))
    return paths


def test_openapi_json_describes_every_route_the_router_serves(server):
    with urllib.request.urlopen(f"{server.url}/openapi.json", timeout=5) as response:
        assert response.headers["Content-Type"].startswith("application/json")
        document = json.load(response)
    assert document["openapi"].startswith("3.")
    documented = set(document["paths"])
    served = routes_in_sources()
    assert len(served) >= 17
    assert served == documented, (served - documented, documented - served)


def test_schemathesis_finds_no_server_error(server):
    """Every operation of /openapi.json, about 3,000 generated requests (valid and invalid
    bodies, parameters and headers): no answer may be a 5xx. The event stream is left out:
    a stream does not end (test_events.py drives it)."""
    project = server.create_project("schema-project")
    token = access_token(project)
    result = subprocess.run(
        [os.path.join(ROOT, ".venv", "bin", "schemathesis"), "run", f"{server.url}/openapi.json",
         "--checks", "not_a_server_error", "--max-examples", "100", "--seed", "1", "--no-color",
         "--generation-database", "none", "--warnings", "off", "-H", f"Authorization: Bearer {token}",
         "--exclude-path", "/v1/projects/{project}/events:stream"],
        capture_output=True, text=True, timeout=600)
    summary = result.stdout[-2500:]
    assert result.returncode == 0, summary
    generated = re.search(r"(\d+) generated, (\d+) passed", summary)
    assert generated and int(generated.group(1)) > 1000 and generated.group(1) == generated.group(2), summary
    healthy(server.url)


# ------------------------------------------------------------------ slow and oversized HTTP clients


def test_slowloris_on_http_is_cut_off_and_does_not_starve_others(server):
    slow = []
    for _ in range(500):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"POST /v1/projects/compat-devices/messages:send HTTP/1.1\r\nHost: herald\r\n")
        slow.append(sock)
    # A slow body too: a complete head announcing 1,000 bytes, then a trickle.
    body = socket.create_connection(("127.0.0.1", server.port))
    body.sendall(b"POST /token HTTP/1.1\r\nHost: herald\r\nContent-Length: 1000\r\n\r\ngrant")
    stop = threading.Event()

    def trickle():
        while not stop.is_set():
            for sock in slow + [body]:
                try:
                    sock.send(b"X")
                except OSError:
                    pass
            time.sleep(0.3)

    trickler = threading.Thread(target=trickle)
    trickler.start()
    try:
        # Well-behaved requests are answered promptly while the slow ones hang on.
        latencies = [healthy(server.url) for _ in range(50)]
        assert max(latencies) < 1.0, latencies
        # Every slow connection is closed once its deadline passes, though it keeps sending.
        started = time.monotonic()
        assert all(closed_by_server(sock, DEADLINE + 5) for sock in slow + [body])
        assert time.monotonic() - started < DEADLINE + 5
    finally:
        stop.set()
        trickler.join()
        for sock in slow + [body]:
            sock.close()
    healthy(server.url)


def test_a_100_megabyte_body_is_refused_without_holding_it(server):
    token = access_token(herald_project(server))
    before = resident_kb(server.process.pid)
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(
        b"POST /v1/projects/compat-devices/messages:send HTTP/1.1\r\nHost: herald\r\n"
        + f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n".encode()
        + b"Content-Length: 104857600\r\n\r\n")
    chunk = b"[" * 65536
    sent = 0
    try:
        while sent < 104857600:
            sock.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.settimeout(10)
    try:
        answer = sock.recv(4096)
    except ConnectionResetError:
        answer = b""
    sock.close()
    # Refused with 413 (or the connection dropped once the limit was passed), and the
    # server did not keep the body: its memory grew by far less than 100 MB.
    assert answer == b"" or answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < 104857600 or answer.startswith(b"HTTP/1.1 413")
    assert resident_kb(server.process.pid) - before < 30_000
    healthy(server.url)


def test_a_100_megabyte_chunked_body_is_refused_too(server):
    token = access_token(herald_project(server))
    request = urllib.request.Request(
        f"{server.url}/v1/projects/compat-devices/messages:send", method="POST",
        data=(b"x" * 1048576 for _ in range(100)),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                 "Transfer-Encoding": "chunked"})
    try:
        urllib.request.urlopen(request, timeout=30)
        status = 200
    except urllib.error.HTTPError as error:
        status = error.code
        assert json.loads(error.read())["error"]["status"] == "INVALID_ARGUMENT" or status == 413
    except (BrokenPipeError, ConnectionResetError, urllib.error.URLError):
        status = None  # dropped once past the limit
    assert status in (413, None)
    healthy(server.url)


def herald_project(server):
    return server.projects["compat-devices"]


# ------------------------------------------------------------------ the device gateway


SILENT_DEADLINE = 60  # --login-timeout of the server that holds 10,000 silent connections


@pytest.fixture
def patient_server(server):
    """A server whose login deadline outlasts opening 10,000 connections on two busy cores
    (5 to 10 s, each batch after the server took the last, far longer on a loaded machine),
    so that all of them are held
    at once before the deadline drops them."""
    herald = HeraldServer()
    herald.projects = {"compat-devices": herald.create_project("compat-devices")}
    # The bounds on connections not yet authenticated are lifted: this checks that the
    # login deadline drops silent connections at scale (test_attacks_second_round.py checks
    # the bounds).
    herald.start("--login-timeout", str(SILENT_DEADLINE), "--unauthenticated-connections-per-address", "0",
                 "--unauthenticated-connections", "0")
    yield herald
    herald.stop()
    # Put back the module server's receiver redirections for the tests after this one.
    receiver(server)


def test_10000_gateway_connections_that_never_log_in_are_dropped_and_devices_still_get_messages(patient_server):
    server = patient_server
    silent = []
    held = 0  # the connections the server holds: its open descriptors over those before

    def descriptors():
        return len(os.listdir(f"/proc/{server.process.pid}/fd"))

    # Open them in batches of 500, each after the server has taken the one before from the
    # listen queue (1,024 deep), so that none waits in a kernel queue the server cannot see.
    baseline = descriptors()
    for index in range(10_000):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", server.gateway_port))
        silent.append(sock)
        if index % 500 == 499:
            taken = time.monotonic() + 2
            while descriptors() - baseline < index + 1 and time.monotonic() < taken:
                time.sleep(0.01)
            held = max(held, descriptors() - baseline)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and held < 10_000:
        held = max(held, descriptors() - baseline)
        time.sleep(0.1)
    assert held >= 9_500, held
    app = herald_sdk.initialize(server.url, herald_project(server)["key_file"], name="hostile")

    async def a_device_receives():
        client, received = receiver(server)
        token = await client.checkin_or_register()
        await client.start()
        assert await wait_for(client.is_started, seconds=20)
        messaging.send(messaging.Message(token=token, data={"beside": "10000 silent connections"}), app=app)
        assert await wait_for(lambda: received, seconds=20)
        await client.stop()
        return received

    received = asyncio.run(a_device_receives())
    assert received[0][0]["data"] == {"beside": "10000 silent connections"}
    # The login deadline closes every silent connection.
    deadline = time.monotonic() + SILENT_DEADLINE + 20
    open_ones = list(silent)
    while open_ones and time.monotonic() < deadline:
        still = []
        for sock in open_ones:
            try:
                if sock.recv(1) == b"":
                    sock.close()
                    continue
            except BlockingIOError:
                still.append(sock)
                continue
            except OSError:
                sock.close()
                continue
            still.append(sock)
        open_ones = still
        time.sleep(0.5)
    left = len(open_ones)
    for sock in open_ones:
        sock.close()
    assert left == 0, f"{left} of 10,000 silent connections still open"
    assert len(os.listdir(f"/proc/{server.process.pid}/fd")) < 1_000


def test_slowloris_and_oversized_frames_on_the_gateway(server):
    plain = socket.create_connection(("127.0.0.1", server.gateway_port))
    # The gateway speaks TLS: a client trickling a handshake a byte at a time is still cut off.
    trickled = 0
    started = time.monotonic()
    plain.settimeout(0.3)
    closed = False
    while time.monotonic() - started < DEADLINE + 10:
        try:
            plain.send(b"\x16")
            trickled += 1
            if plain.recv(1) == b"":
                closed = True
                break
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            closed = True
            break
    plain.close()
    assert closed, f"still open after {trickled} bytes over {DEADLINE + 10} s"

    # Past TLS, a frame announcing 100 MB is refused at once, without reading it.
    import ssl
    context = ssl.create_default_context(cafile=server.ca_file)
    before = resident_kb(server.process.pid)
    with socket.create_connection(("127.0.0.1", server.gateway_port)) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            size = 100 * 1024 * 1024
            varint = bytearray()
            while True:
                byte = size & 0x7F
                size >>= 7
                varint.append(byte | (0x80 if size else 0))
                if not size:
                    break
            tls.sendall(bytes([41, 2]) + bytes(varint))  # version 41, LoginRequest, length
            sent = 0
            try:
                while sent < 20 * 1024 * 1024:
                    tls.sendall(b"\0" * 65536)
                    sent += 65536
            except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
                pass
            assert closed_by_server(tls, 10)
    assert resident_kb(server.process.pid) - before < 30_000
    healthy(server.url)


def test_a_device_that_never_reads_is_not_read_from_either(server, tmp_path):
    """A logged-in device floods heartbeat pings and never reads the answers: the server
    cuts it off (more than 20 pings a second is a stream error) and, until then, stops
    reading from it once its answers back up, instead of holding them."""
    import ssl

    from firebase_messaging.proto import mcs_pb2

    project = herald_project(server)
    identity = tmp_path / "identity.json"
    device = subprocess.Popen(
        [HERALD, "device", "--server", server.url, "--project", project["id"], "--api-key", project["api_key"],
         "--app-id", "com.example.flood", "--gateway", f"127.0.0.1:{server.gateway_port}", "--ca", server.ca_file,
         "--identity", str(identity)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    device.stdout.readline()  # its token: checked in and registered
    device.communicate("quit\n", timeout=10)
    saved = json.loads(identity.read_text())
    login = mcs_pb2.LoginRequest(
        id="flood", domain="mcs.android.com", user=str(saved["androidID"]), resource=str(saved["androidID"]),
        auth_token=str(saved["securityToken"]), device_id="android-flood", auth_service=2, use_rmq2=True)
    payload = login.SerializeToString()

    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect(("127.0.0.1", server.gateway_port))
    context = ssl.create_default_context(cafile=server.ca_file)
    tls = context.wrap_socket(raw, server_hostname="127.0.0.1")
    tls.sendall(bytes([41, 2, len(payload) & 0x7F | 0x80, len(payload) >> 7]) + payload)
    tls.settimeout(5)
    assert tls.recv(2)[:2] == bytes([41, 3])  # version, LoginResponse
    before = resident_kb(server.process.pid)
    tls.setblocking(False)
    pings = bytes([0, 0]) * 32768  # HeartbeatPing frames, empty

    def flood(seconds):
        sent, deadline = 0, time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                sent += tls.send(pings)
            except (ssl.SSLWantWriteError, BlockingIOError):
                time.sleep(0.05)
            except (ssl.SSLError, ConnectionError):
                return None  # closed by the server
        return sent

    first = flood(5)  # until the server closes it or everything between the two ends is full
    later = flood(2) if first is not None else None  # a server still reading would take more now
    tls.close()
    assert later in (0, None), f"the server read {later} more bytes from a device that reads nothing"
    assert resident_kb(server.process.pid) - before < 30_000
    healthy(server.url)
