"""A browser push service's stand-in for tests and benchmarks of Herald's Web Push hand-off
(SEMANTICS W2, W3)."""
import asyncio

from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import DataReceived, RequestReceived, StreamEnded

from apns_simulator import LoopbackTLSServer


class PushService(LoopbackTLSServer):
    """A browser push service's stand-in on 127.0.0.1, over TLS (its own CA, `ca_file`) and
    HTTP/2: answers each push with the status `answers` gives its path (default 201) and counts
    pushes, connections and the `Authorization` headers it saw. It starts down: `come_up()`."""

    def __init__(self, answers=lambda path: 201):
        super().__init__("push-service-")
        self.answers = answers
        self.pushes, self.connections, self.authorizations = 0, 0, set()

    def protocol(self):
        return _Connection(self)


class _Connection(asyncio.Protocol):
    def __init__(self, service):
        self.service = service
        self.h2 = H2Connection(config=H2Configuration(client_side=False, header_encoding="utf-8"))
        self.paths = {}

    def connection_made(self, transport):
        self.transport = transport
        self.service.transports.add(transport)
        self.service.connections += 1
        self.h2.initiate_connection()
        self.h2.update_settings({0x3: 1000})
        transport.write(self.h2.data_to_send())

    def connection_lost(self, exc):
        self.service.transports.discard(self.transport)

    def data_received(self, data):
        for event in self.h2.receive_data(data):
            if isinstance(event, RequestReceived):
                headers = dict(event.headers)
                self.service.authorizations.add(headers.get("authorization"))
                self.paths[event.stream_id] = headers.get(":path", "")
            elif isinstance(event, DataReceived):
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, StreamEnded):
                self.service.pushes += 1
                status = self.service.answers(self.paths.pop(event.stream_id, ""))
                self.h2.send_headers(event.stream_id, [(":status", str(status))], end_stream=True)
        self.transport.write(self.h2.data_to_send())
