"""A strict stand-in for Apple's push service (APNs) on loopback, built from Apple's
documentation of the provider API, for tests of what Herald hands to APNs.

It speaks HTTP/2 over TLS only (ALPN `h2`, or HTTP/2's preface from a client that offers no
ALPN, as Apple's servers take it; anything else is closed), takes
`POST /3/device/<token>`, checks every request as APNs documents it and answers with APNs'
status codes and reasons (a JSON body `{"reason": …}`, with `timestamp` for 410):

- provider tokens: `authorization: bearer <JWT>`, ES256 with the `kid` of a key it was
  given and `iss` that key's team; older than an hour is `ExpiredProviderToken`; a connection
  that changes its token within 20 minutes of the last is `TooManyProviderTokenUpdates` (429);
- `apns-topic` must be given and be the bundle id the device token belongs to;
- `apns-push-type`, `apns-priority` (background only 5), `apns-expiration`,
  `apns-collapse-id` (64 bytes), `apns-id` (a UUID; echoed, or made) and the payload (a
  JSON object of at most 4 KB) are checked as APNs does;
- device tokens are 64 hexadecimal digits; a token it was not told of is `BadDeviceToken`,
  one marked unregistered answers 410 `Unregistered`.

Tests drive it: `add_device`, `unregister`, `set_keys`, `go_down`/`come_up`, and read what
it accepted in `received`. Its TLS certificate is its own CA's (`ca_file`)."""
import asyncio
import datetime
import json
import os
import re
import ssl
import tempfile
import threading
import time
import uuid

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import ConnectionTerminated, DataReceived, RequestReceived, StreamEnded, StreamReset

PUSH_TYPES = {"alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
              "pushtotalk", "widgets", "controls"}
TOKEN_LIFETIME = 3600
TOKEN_REFRESH_FLOOR = 20 * 60
MAX_PAYLOAD = 4096
MAX_VOIP_PAYLOAD = 5120
UUID_PATTERN = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
TOKEN_PATTERN = re.compile(r"^[0-9a-fA-F]{64}$")


def make_p8():
    """A new APNs signing key as Apple hands it out: a P-256 private key in PKCS#8 PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _certificate(directory):
    """A CA and a server certificate for 127.0.0.1 and Apple's host names, written to `directory`."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    # A name of its own: TLS clients find a CA by its name, and several simulators may be trusted at once.
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"APNs simulator CA {os.urandom(4).hex()}")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    import ipaddress
    names = [x509.DNSName("api.push.apple.com"), x509.DNSName("api.development.push.apple.com"),
             x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "api.push.apple.com")]))
                   .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.SubjectAlternativeName(names), critical=False)
                   .sign(ca_key, hashes.SHA256()))
    paths = {name: os.path.join(directory, name) for name in ("ca.pem", "server.pem", "server.key")}
    with open(paths["ca.pem"], "wb") as out:
        out.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.pem"], "wb") as out:
        out.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.key"], "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return paths


class Refusal(Exception):
    def __init__(self, status, reason, timestamp=None):
        super().__init__(reason)
        self.status, self.reason, self.timestamp = status, reason, timestamp


class LoopbackTLSServer:
    """An HTTP/2 server over TLS on 127.0.0.1 with a CA of its own (`ca_file`), run on an event
    loop thread of its own; `protocol()` makes each connection's protocol."""

    def __init__(self, prefix):
        self.directory = tempfile.mkdtemp(prefix=prefix)
        paths = _certificate(self.directory)
        self.ca_file = paths["ca.pem"]
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(paths["server.pem"], paths["server.key"])
        self.tls.set_alpn_protocols(["h2"])
        self.loop = asyncio.new_event_loop()
        self.server = None
        self.port = None
        self.transports = set()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def come_up(self):
        async def start():
            return await self.loop.create_server(self.protocol, "127.0.0.1", self.port or 0,
                                                 ssl=self.tls, reuse_address=True)
        self.server = asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)
        self.port = self.server.sockets[0].getsockname()[1]

    def go_down(self):
        """Stops listening and drops every connection, as an unreachable service would."""
        async def stop():
            self.server.close()
            for transport in list(self.transports):
                transport.abort()
            await self.server.wait_closed()
        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)

    def close(self):
        self.go_down()
        self.loop.call_soon_threadsafe(self.loop.stop)


class APNsSimulator(LoopbackTLSServer):
    def __init__(self):
        super().__init__("apns-simulator-")
        self.lock = threading.Lock()
        self.keys = {}  # key id -> (team id, public key)
        self.devices = {}  # device token -> bundle id
        self.unregistered = {}  # device token -> milliseconds since the epoch
        self.received = []  # what was accepted: dicts of token, headers, payload, apns_id, jwt
        self.refused = []  # (status, reason) of each refusal
        self.connections = 0
        self.come_up()

    def protocol(self):
        return _Connection(self)

    # ------------------------------------------------------------------ control

    def set_keys(self, keys):
        """`keys`: {key id: (team id, .p8 PEM)} whose provider tokens are accepted."""
        with self.lock:
            self.keys = {kid: (team, serialization.load_pem_private_key(pem.encode(), None).public_key())
                         for kid, (team, pem) in keys.items()}

    def trust_client_certificates(self, ca_pem):
        """Accepts client certificates issued by `ca_pem` (a PEM string; a self-signed
        certificate is its own issuer): a connection that presents one authenticates its
        requests without a provider token, for the bundle id in its subject's UID, as
        Apple's certificate-based connections do."""
        self.tls.load_verify_locations(cadata=ca_pem)
        self.tls.verify_mode = ssl.CERT_OPTIONAL

    def add_device(self, bundle_id, token=None):
        token = token or os.urandom(32).hex()
        with self.lock:
            self.devices[token] = bundle_id
        return token

    def unregister(self, token):
        with self.lock:
            self.unregistered[token] = int(time.time() * 1000)

    def accepted(self):
        with self.lock:
            return list(self.received)

    # ------------------------------------------------------------------ the rules

    def check(self, method, path, headers, body, connection=None):
        """The answer APNs gives a request: (status, reason or None, apns-id)."""
        apns_id = headers.get("apns-id")
        if apns_id is not None and not UUID_PATTERN.match(apns_id):
            raise Refusal(400, "BadMessageId")
        apns_id = apns_id or str(uuid.uuid4()).upper()
        if method != "POST":
            raise Refusal(405, "MethodNotAllowed")
        match = re.fullmatch(r"/3/device/([^/]*)", path)
        if not match:
            raise Refusal(404, "BadPath")
        token = match.group(1)
        if not token:
            raise Refusal(400, "MissingDeviceToken")
        connection = connection if connection is not None else {}
        certified = connection.get("certificate_uid")
        if certified is None or headers.get("authorization"):
            self.check_provider_token(headers.get("authorization"), connection)
        topic = headers.get("apns-topic")
        if not topic:
            raise Refusal(400, "MissingTopic")
        if certified is not None and not headers.get("authorization") and topic != certified:
            raise Refusal(400, "TopicDisallowed")
        push_type = headers.get("apns-push-type")
        if push_type is not None and push_type not in PUSH_TYPES:
            raise Refusal(400, "InvalidPushType")
        priority = headers.get("apns-priority")
        if priority is not None and priority not in ("10", "5", "1"):
            raise Refusal(400, "BadPriority")
        if push_type == "background" and priority not in (None, "5", "1"):
            raise Refusal(400, "BadPriority")
        expiration = headers.get("apns-expiration")
        if expiration is not None and not re.fullmatch(r"\d+", expiration):
            raise Refusal(400, "BadExpirationDate")
        collapse = headers.get("apns-collapse-id")
        if collapse is not None and len(collapse.encode()) > 64:
            raise Refusal(400, "BadCollapseId")
        limit = MAX_VOIP_PAYLOAD if push_type == "voip" else MAX_PAYLOAD
        if not body:
            raise Refusal(400, "PayloadEmpty")
        if len(body) > limit:
            raise Refusal(413, "PayloadTooLarge")
        try:
            payload = json.loads(body)
        except ValueError:
            raise Refusal(400, "BadPayload")
        if not isinstance(payload, dict):
            raise Refusal(400, "BadPayload")
        with self.lock:
            bundle = self.devices.get(token)
            gone = self.unregistered.get(token)
        if not TOKEN_PATTERN.match(token) or bundle is None:
            raise Refusal(400, "BadDeviceToken")
        base_topic = topic.removesuffix(".voip").removesuffix(".complication")
        if base_topic != bundle:
            raise Refusal(400, "DeviceTokenNotForTopic")
        if gone is not None:
            raise Refusal(410, "Unregistered", timestamp=gone)
        return token, payload, apns_id

    def check_provider_token(self, authorization, connection):
        """Checks a provider token; `connection` keeps the last token its connection used."""
        if not authorization or not authorization.lower().startswith("bearer "):
            raise Refusal(403, "MissingProviderToken")
        token = authorization[7:].strip()
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise Refusal(403, "InvalidProviderToken")
        with self.lock:
            key = self.keys.get(header.get("kid"))
        if header.get("alg") != "ES256" or key is None:
            raise Refusal(403, "InvalidProviderToken")
        team, public_key = key
        try:
            claims = jwt.decode(token, public_key, algorithms=["ES256"],
                                options={"verify_aud": False, "verify_exp": False, "verify_iat": False})
        except jwt.PyJWTError:
            raise Refusal(403, "InvalidProviderToken")
        issued = claims.get("iat")
        if claims.get("iss") != team or not isinstance(issued, int):
            raise Refusal(403, "InvalidProviderToken")
        if issued < time.time() - TOKEN_LIFETIME:
            raise Refusal(403, "ExpiredProviderToken")
        last = connection.get("provider_token")
        if last and last[0] != token and issued < last[1] + TOKEN_REFRESH_FLOOR:
            raise Refusal(429, "TooManyProviderTokenUpdates")
        connection["provider_token"] = (token, issued)


class _Connection(asyncio.Protocol):
    """One HTTP/2 connection: requests gathered by stream, each answered when it ends."""

    def __init__(self, simulator):
        self.simulator = simulator
        self.h2 = H2Connection(config=H2Configuration(client_side=False, header_encoding="utf-8"))
        self.streams = {}
        self.transport = None
        self.state = {}  # the connection's provider token

    def connection_made(self, transport):
        ssl_object = transport.get_extra_info("ssl_object")
        # HTTP/2 only: a client that negotiates another protocol is closed, one that names
        # none (aioapns, as against Apple) must start with HTTP/2's preface.
        if ssl_object is None or ssl_object.selected_alpn_protocol() not in ("h2", None):
            transport.abort()
            return
        self.transport = transport
        # A client certificate the connection presented names the bundle id it may push to.
        subject = dict(item for part in (ssl_object.getpeercert() or {}).get("subject", ()) for item in part)
        if "userId" in subject:
            self.state["certificate_uid"] = subject["userId"]
        self.simulator.transports.add(transport)
        self.simulator.connections += 1
        self.h2.initiate_connection()
        self.h2.update_settings({0x3: 1000})  # SETTINGS_MAX_CONCURRENT_STREAMS
        transport.write(self.h2.data_to_send())

    def connection_lost(self, exc):
        self.simulator.transports.discard(self.transport)

    def data_received(self, data):
        try:
            events = self.h2.receive_data(data)
        except Exception:
            self.transport.abort()
            return
        for event in events:
            if isinstance(event, RequestReceived):
                names = [name for name, _ in event.headers]
                self.streams[event.stream_id] = {
                    "headers": dict(event.headers), "body": b"",
                    "duplicate": len(names) != len(set(names))}
            elif isinstance(event, DataReceived):
                self.streams[event.stream_id]["body"] += event.data
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, StreamEnded):
                self.answer(event.stream_id)
            elif isinstance(event, (StreamReset,)):
                self.streams.pop(event.stream_id, None)
            elif isinstance(event, ConnectionTerminated):
                self.transport.close()
        self.transport.write(self.h2.data_to_send())

    def answer(self, stream_id):
        request = self.streams.pop(stream_id)
        headers = request["headers"]
        simulator = self.simulator
        apns_id = headers.get("apns-id") or str(uuid.uuid4()).upper()
        try:
            if request["duplicate"]:
                raise Refusal(400, "DuplicateHeaders")
            token, payload, apns_id = simulator.check(
                headers.get(":method"), headers.get(":path", ""), headers, request["body"], self.state)
        except Refusal as refusal:
            body = {"reason": refusal.reason}
            if refusal.timestamp is not None:
                body["timestamp"] = refusal.timestamp
            data = json.dumps(body).encode()
            with simulator.lock:
                simulator.refused.append((refusal.status, refusal.reason))
            self.h2.send_headers(stream_id, [(":status", str(refusal.status)), ("apns-id", apns_id),
                                             ("content-type", "application/json"),
                                             ("content-length", str(len(data)))])
            self.h2.send_data(stream_id, data, end_stream=True)
            return
        with simulator.lock:
            simulator.received.append({
                "token": token, "headers": {k: v for k, v in headers.items() if not k.startswith(":")},
                "payload": payload, "apns_id": apns_id,
                "jwt": headers.get("authorization", "")[7:], "certificate": self.state.get("certificate_uid")})
        self.h2.send_headers(stream_id, [(":status", "200"), ("apns-id", apns_id)], end_stream=True)
