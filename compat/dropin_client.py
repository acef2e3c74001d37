"""An app server and a device with no redirect code: firebase-admin as it ships, its key file
naming Google's token URL, and the firebase-messaging receiver with its default endpoints
(check-in, installations, registrations, mtalk.google.com:5228), subscribed to topics
through both of firebase-admin's topic calls. Run inside a network namespace whose hosts
file maps FCM's host names to Herald, trusting Herald's drop-in CA (SSL_CERT_FILE,
REQUESTS_CA_BUNDLE). Prints one JSON object with what each call answered; the test judges
it."""
import asyncio
import os
import socket
import ssl
import time

import h2.connection
import h2.events
import h2.settings
import json
import sys

import firebase_admin
import google.auth.transport.requests
import httpx
from firebase_admin import credentials, messaging
from google.oauth2 import service_account

key_file, api_key, project_number = sys.argv[1:4]
app = firebase_admin.initialize_app(credentials.Certificate(key_file))
results = {}
results["send"] = messaging.send(messaging.Message(topic="news", data={"k": "v"}))
results["dry_run"] = messaging.send(messaging.Message(topic="news", data={"k": "dry"}), dry_run=True)


async def send_each():
    batch = await messaging.send_each_async(
        [messaging.Message(topic="news", data={"n": str(i)}) for i in range(3)])
    sent = [response.message_id for response in batch.responses if response.success]
    # As the Admin SDKs send in bulk: 500 messages at once over one HTTP/2 connection (the
    # SDK's async client belongs to this event loop).
    messages = [messaging.Message(topic="bulk", data={"n": str(i)}) for i in range(500)]
    started = time.monotonic()
    bulk = await messaging.send_each_async(messages)
    failures = sorted({str(response.exception) for response in bulk.responses if not response.success})
    return sent, {"success": bulk.success_count, "failures": failures, "seconds": round(time.monotonic() - started, 3)}


results["send_each_async"], results["send_each_async_500"] = asyncio.run(send_each())


def advertised_stream_limit():
    """The concurrent streams the server allows an HTTP/2 connection, read with the h2 library."""
    context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection(("fcm.googleapis.com", 443), timeout=10)
    with context.wrap_socket(raw, server_hostname="fcm.googleapis.com") as tls:
        connection = h2.connection.H2Connection()
        connection.initiate_connection()
        tls.sendall(connection.data_to_send())
        limit = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (limit is None or limit < 1000):
            data = tls.recv(65535)
            if not data:
                break
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.RemoteSettingsChanged):
                    changed = event.changed_settings.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
                    if changed is not None:
                        limit = changed.new_value
            tls.sendall(connection.data_to_send())
        return limit


results["advertised_stream_limit"] = advertised_stream_limit()
topic = messaging.subscribe_to_topic(["not-a-token"], "news")
results["subscribe_to_topic"] = {"success": topic.success_count, "failure": topic.failure_count,
                                 "reasons": [error.reason for error in topic.errors]}


async def receive():
    from firebase_messaging import FcmPushClient, FcmRegisterConfig

    received = []
    config = FcmRegisterConfig(project_id="compat-dropin", app_id=f"1:{project_number}:web:dropin",
                               api_key=api_key, messaging_sender_id=project_number)
    client = FcmPushClient(lambda message, persistent_id, _: received.append(message), config, None)
    token = await client.checkin_or_register()
    await client.start()
    for _ in range(200):
        if client.is_started():
            break
        await asyncio.sleep(0.05)
    messaging.send(messaging.Message(token=token, data={"to": "receiver"}))
    # Both topic-management calls with the receiver's real token: the v1 one
    # (fcm.googleapis.com .../topicSubscriptions) and the legacy Instance ID one
    # (iid.googleapis.com/iid/v1:batchAdd); a send to each topic then reaches it.
    v1 = messaging.subscribe_to_topic([token], "dropin-v1")
    legacy = messaging.subscribe_to_topic_legacy([token], "dropin-legacy")
    results["subscribed"] = {"v1": v1.success_count, "legacy": legacy.success_count}
    messaging.send(messaging.Message(topic="dropin-v1", data={"to": "dropin-v1"}))
    messaging.send(messaging.Message(topic="dropin-legacy", data={"to": "dropin-legacy"}))
    for _ in range(200):
        if len(received) >= 3:
            break
        await asyncio.sleep(0.05)
    await client.stop()
    return sorted((message.get("data") for message in received), key=lambda data: data["to"])


results["firebase_messaging"] = asyncio.run(receive())
# An access token for the curl check, fetched from the token URL in the key file.
scoped = service_account.Credentials.from_service_account_file(
    key_file, scopes=["https://www.googleapis.com/auth/firebase.messaging"])
scoped.refresh(google.auth.transport.requests.Request())
results["access_token"] = scoped.token
# The HTTP version httpx (send_each_async's transport, HTTP/2 enabled) negotiates.
with httpx.Client(http2=True) as client:
    results["httpx_http_version"] = client.get("https://fcm.googleapis.com/v1/projects/compat-dropin/x").http_version
print(json.dumps(results))
