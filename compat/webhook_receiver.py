"""A webhook endpoint as an app server would write one, with Python's http.server: it
checks every request's `Herald-Signature` as docs/EVENTS.md documents and keeps the
events it took, in the order they came."""
import hashlib
import hmac
import http.server
import json
import threading
import time


def verify(secret, header, body, now=None, tolerance=300):
    """The documented check: recompute the HMAC-SHA256 of `t.body` with the webhook's secret,
    compare in constant time, and refuse a timestamp more than `tolerance` seconds away."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((now if now is not None else time.time()) - timestamp) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("v1", ""))


class Receiver:
    """An endpoint on a loopback port that can go down and come back on the same port."""

    def __init__(self, port, delay=0.0):
        self.port = port
        self.delay = delay
        self.secret = None
        self.events = []
        self.requests = []
        self.refused = 0
        self.lock = threading.Lock()
        self.server = None
        self.up()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hook"

    def up(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if receiver.delay:
                    time.sleep(receiver.delay)
                signature = self.headers.get("Herald-Signature", "")
                if receiver.secret is None or not verify(receiver.secret, signature, body):
                    with receiver.lock:
                        receiver.refused += 1
                    self.send_response(400)
                    self.end_headers()
                    return
                event = json.loads(body)
                assert self.headers["Herald-Event-Id"] == event["id"]
                with receiver.lock:
                    receiver.events.append(event)
                    receiver.requests.append((dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self):
        self.server.shutdown()
        self.server.server_close()

    def taken(self):
        with self.lock:
            return list(self.events)

    def wait_for(self, ids, seconds=30):
        """Waits until every event id in `ids` came; answers the events taken."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            taken = self.taken()
            if set(ids) <= {event["id"] for event in taken}:
                return taken
            time.sleep(0.1)
        missing = set(ids) - {event["id"] for event in self.taken()}
        raise AssertionError(f"events never came: {sorted(missing)}")
