"""An app server with no redirect code: firebase-admin as it ships, its key file naming
Google's token URL. Run inside a network namespace whose hosts file maps FCM's host names to
Herald, trusting Herald's drop-in CA (SSL_CERT_FILE, REQUESTS_CA_BUNDLE). Prints one JSON
object with what each call answered; the test judges it."""
import asyncio
import json
import sys

import firebase_admin
import google.auth.transport.requests
import httpx
from firebase_admin import credentials, messaging
from google.oauth2 import service_account

key_file = sys.argv[1]
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
# An access token for the curl check, fetched from the token URL in the key file.
scoped = service_account.Credentials.from_service_account_file(
    key_file, scopes=["https://www.googleapis.com/auth/firebase.messaging"])
scoped.refresh(google.auth.transport.requests.Request())
results["access_token"] = scoped.token
# The HTTP version httpx (send_each_async's transport, HTTP/2 enabled) negotiates.
with httpx.Client(http2=True) as client:
    results["httpx_http_version"] = client.get("https://fcm.googleapis.com/v1/projects/compat-dropin/x").http_version
print(json.dumps(results))
