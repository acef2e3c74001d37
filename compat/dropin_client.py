"""An app server and a device with no redirect code: firebase-admin as it ships, its key file
naming Google's token URL, and the firebase-messaging receiver with its default endpoints
(check-in, installations, registrations, mtalk.google.com:5228), subscribed to topics
through both of firebase-admin's topic calls. Run inside a network namespace whose hosts
file maps FCM's host names to Herald, trusting Herald's drop-in CA (SSL_CERT_FILE,
REQUESTS_CA_BUNDLE). Prints one JSON object with what each call answered; the test judges
it."""
import asyncio
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
    return [response.message_id for response in batch.responses if response.success]


results["send_each_async"] = asyncio.run(send_each())
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
