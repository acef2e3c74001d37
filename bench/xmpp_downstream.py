"""Downstream messages a second on one XMPP app-server connection with FCM's window of 100
unacknowledged messages, and the server's CPU per message from /proc.

A minimal XMPP client on asyncio (TLS, SASL PLAIN, bind), so that the client costs little
beside the server: it keeps 100 messages waiting for their ack, sends the next one as each
ack comes, and stops after --seconds. Usage (scripts/bench-xmpp runs it):

    python3 bench/xmpp_downstream.py --port P --ca CA --sender N --key K --pid PID [--seconds S] [--dry-run]
"""
import argparse
import asyncio
import base64
import json
import os
import re
import ssl
import time

WINDOW = 100


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def read_until(reader, buffer, pattern):
    while not re.search(pattern, buffer):
        chunk = await reader.read(65536)
        if not chunk:
            raise ConnectionError("closed")
        buffer += chunk.decode()
    return buffer


async def login(arguments):
    context = ssl.create_default_context(cafile=arguments.ca)
    context.check_hostname = False
    reader, writer = await asyncio.open_connection("127.0.0.1", arguments.port, ssl=context)
    opening = ("<stream:stream to='fcm.googleapis.com' version='1.0' xmlns='jabber:client' "
               "xmlns:stream='http://etherx.jabber.org/streams'>")
    writer.write(opening.encode())
    buffer = await read_until(reader, "", "</stream:features>")
    plain = base64.b64encode(f"\0{arguments.sender}@fcm.googleapis.com\0{arguments.key}".encode()).decode()
    writer.write(f"<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>{plain}</auth>".encode())
    buffer = await read_until(reader, "", "<success|<failure")
    if "<success" not in buffer:
        raise RuntimeError(buffer)
    writer.write(opening.encode())
    await read_until(reader, "", "</stream:features>")
    writer.write(b"<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></iq>")
    await read_until(reader, "", "</iq>")
    return reader, writer


async def run(arguments):
    reader, writer = await login(arguments)
    payload = {"to": "/topics/bench", "data": {"k": "v"}}
    if arguments.dry_run:
        payload["dry_run"] = True
    sent = acked = nacked = 0
    errors = {}
    deadline = None

    def send_one():
        nonlocal sent
        message = dict(payload, message_id=f"m{sent}")
        text = json.dumps(message).replace("&", "&amp;").replace("<", "&lt;")
        writer.write(f"<message id=''><gcm xmlns='google:mobile:data'>{text}</gcm></message>".encode())
        sent += 1

    cpu_before = cpu_seconds(arguments.pid)
    started = time.monotonic()
    deadline = started + arguments.seconds
    for _ in range(WINDOW):
        send_one()
    buffer = ""
    while acked + nacked < sent:
        chunk = await reader.read(65536)
        if not chunk:
            raise ConnectionError("closed")
        buffer += chunk.decode()
        answers = buffer.count("</message>")
        if answers:
            head, _, buffer = buffer.rpartition("</message>")
            nacks = head.count('"nack"')
            nacked += nacks
            for code in re.findall(r'"error":"([A-Z_]+)"', head):
                errors[code] = errors.get(code, 0) + 1
            acked += answers - nacks
            if time.monotonic() < deadline:
                for _ in range(answers):
                    send_one()
    elapsed = time.monotonic() - started
    cpu = cpu_seconds(arguments.pid) - cpu_before
    writer.write(b"</stream:stream>")
    writer.close()
    print(json.dumps({
        "mode": "dry_run" if arguments.dry_run else "topic", "window": WINDOW, "seconds": round(elapsed, 2),
        "acked": acked, "nacked": nacked, "nack_codes": errors, "messages_per_second": round(acked / elapsed),
        "server_cpu_microseconds_per_message": round(cpu / max(acked, 1) * 1e6, 1),
    }))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--sender", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--dry-run", action="store_true")
    asyncio.run(run(parser.parse_args()))
