"""Fixtures that run a real `herald serve` for the compatibility suite."""
import contextlib
import http.server
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import firebase_admin
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERALD = os.environ.get("HERALD_BIN", os.path.join(ROOT, ".build", "debug", "herald"))


def wait_for(condition, timeout=30, interval=0.05):
    """Polls `condition` until it answers something true, which it returns; fails after `timeout` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("timed out")


def counter(metrics, name, label=""):
    """The sum of a Prometheus counter's series in `metrics`, those carrying `label` when given."""
    pattern = re.compile(rf"^{name}\{{[^}}]*{label}[^}}]*\}} ([0-9.e+]+)$" if label
                         else rf"^{name}(?:\{{[^}}]*\}})? ([0-9.e+]+)$")
    return sum(float(m.group(1)) for line in metrics.splitlines() if (m := pattern.match(line)))


def event_types(server, project, name, app):
    """The types of the events of the message `name` (a send's answer), read with `app`'s
    credential; None until there is more than its acceptance."""
    message_id = name.rsplit("/", 1)[1]
    access_token = app.credential.get_access_token().access_token
    request = urllib.request.Request(
        f"{server.url}/v1/projects/{project}/messages/{urllib.parse.quote(message_id, safe='')}/events",
        headers={"Authorization": f"Bearer {access_token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        types = [event["type"] for event in json.load(response)["events"]]
    return types if len(types) > 1 else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def printed_fields(output):
    """The `name: value` lines a herald command printed (`herald project create`, `webhook
    add`), as a dictionary."""
    return {key.strip(): value.strip() for key, value in
            (line.split(":", 1) for line in output.splitlines() if ":" in line)}


def wait_until_healthy(url, seconds=30):
    """Waits until a herald serve answers its health check."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"herald serve at {url} did not start")


class ServeProcess:
    """What every harness does with its `herald serve` process (in `self.process`)."""

    process = None

    def kill(self):
        """Kills the server with SIGKILL, as a crash would."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self):
        """Stops the server gracefully, killing it if it takes too long."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


class HeraldServer:
    """A herald serve process on a free loopback port with its own data directory."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="herald-compat-")
        self.data_dir = os.path.join(self.directory, "data")
        self.port = free_port()
        self.gateway_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ca_file = os.path.join(self.data_dir, "tls", "ca.pem")
        self.process = None

    def cli(self, *args):
        result = subprocess.run(
            [HERALD, *args, "--data-dir", self.data_dir], capture_output=True, text=True, timeout=60
        )
        if result.returncode != 0:
            raise RuntimeError(f"herald {' '.join(args)} failed: {result.stderr}{result.stdout}")
        return result.stdout

    def create_project(self, project_id):
        output = self.cli("project", "create", project_id, "--public-url", self.url, "--key-dir", self.directory)
        fields = printed_fields(output)
        key_file = fields["key file"]
        with open(key_file) as f:
            assert json.load(f)["token_uri"] == f"{self.url}/token"
        return {
            "id": project_id,
            "key_file": key_file,
            "key_id": fields["key id"],
            "number": fields["project number"].split()[0],
            "api_key": fields["api key"],
            "server_key": fields["server key"],
        }

    def start(self, *extra):
        log = open(os.path.join(self.directory, "serve.log"), "ab")
        # Metrics need a token (or --metrics-without-token): the suite reads them with one.
        self.metrics_token = (extra[extra.index("--metrics-token") + 1] if "--metrics-token" in extra
                              else "suite-" + os.urandom(12).hex())
        token = [] if "--metrics-token" in extra else ["--metrics-token", self.metrics_token]
        self.process = subprocess.Popen(
            [HERALD, "serve", "--data-dir", self.data_dir, "--http-port", str(self.port),
             "--gateway-port", str(self.gateway_port), *token, *extra],
            stdout=log, stderr=subprocess.STDOUT,
        )
        wait_until_healthy(self.url)

    def metrics(self):
        request = urllib.request.Request(f"{self.url}/metrics",
                                         headers={"Authorization": f"Bearer {self.metrics_token}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.read().decode()

    def stop(self):
        if self.process:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


@contextlib.contextmanager
def serving(projects, *flags, prepare=None):
    """A `herald serve` with `projects` created (and `prepare(herald)` done) before it starts
    with `flags`; stopped, and its directory removed, at the end."""
    herald = HeraldServer()
    try:
        herald.projects = {name: herald.create_project(name) for name in projects}
        if prepare:
            prepare(herald)
        herald.start(*flags)
        yield herald
    finally:
        herald.stop()


class HeraldDevice:
    """A `herald device` process of one of the session server's projects, with its output
    lines in a queue and commands on its standard input."""

    def __init__(self, herald, project_name, identity, *flags, app_id="com.example.semantics"):
        project = herald.projects[project_name]
        self.process = subprocess.Popen(
            [
                HERALD, "device", "--server", herald.url, "--project", project["id"], "--api-key", project["api_key"],
                "--app-id", app_id, "--gateway", f"127.0.0.1:{herald.gateway_port}",
                "--ca", herald.ca_file, "--identity", str(identity), *flags,
            ],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.token = self.line().split(": ", 1)[1]

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def line(self, timeout=10):
        return self.lines.get(timeout=timeout)

    def message(self, timeout=10):
        return json.loads(self.line(timeout))

    def nothing(self, seconds=1.5):
        """Asserts that no line comes within `seconds`."""
        try:
            line = self.lines.get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected: {line}")

    def command(self, text):
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def stop(self):
        self.command("quit")
        assert self.process.wait(timeout=10) == 0

    def kill(self):
        """Kills the device with SIGKILL, as a crash would, and returns every line it had
        printed and not yet been read: its output is read to the end first."""
        self.process.kill()
        self.process.wait(timeout=10)
        self.reader.join(timeout=10)
        lines = []
        while not self.lines.empty():
            lines.append(self.lines.get())
        return lines


@pytest.fixture(scope="session")
def herald():
    server = HeraldServer()
    server.projects = {name: server.create_project(name) for name in ("compat-alpha", "compat-beta", "compat-devices", "compat-semantics", "compat-legacy",
                                                                 "compat-console", "compat-events")}
    server.cli("project", "set", "compat-semantics", "max-pending=3")
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def clean_apps():
    yield
    for app in list(firebase_admin._apps.values()):
        firebase_admin.delete_app(app)


def serve_site(host, page, worker, on_post):
    """A site on http://HOST:PORT serving `page` and its service worker `/sw.js`, handing
    each POST's path and text to `on_post`; answers the server and its base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body, kind = (worker, "text/javascript") if self.path == "/sw.js" else (page, "text/html")
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            on_post(self.path, self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_port}"
