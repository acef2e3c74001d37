"""A browser that was never pointed at Herald: Debian's Chromium with no GCM switches,
trusting Herald's drop-in CA in its NSS database, run inside a network namespace whose
hosts file maps FCM's host names to Herald. It subscribes a page with the Push API; a Web
Push library then posts to the endpoint exactly as Chromium returned it. Prints one JSON
object (the endpoint, and what the service worker saw); the test judges it."""
import base64
import json
import sys

from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid
from pywebpush import webpush

from test_chromium import Origin, chromium

ca = sys.argv[1]
origin = Origin()
result = {}
try:
    with chromium(ca) as browser:
        vapid = Vapid()
        vapid.generate_keys()
        point = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        browser.call("Browser.grantPermissions", origin=origin.url, permissions=["notifications"])
        session = browser.open(f"{origin.url}/")
        key = base64.urlsafe_b64encode(point).rstrip(b"=").decode()
        subscription = json.loads(browser.evaluate(session, f"subscribe('{key}')"))
        result["endpoint"] = subscription["endpoint"]
        answer = webpush(subscription, data="hello, unmodified browser", vapid_private_key=vapid,
                         vapid_claims={"sub": "mailto:ops@example.com"}, ttl=60)
        result["status"] = answer.status_code
        result["received"] = origin.pushes.get(timeout=30)
finally:
    print(json.dumps(result))
    origin.stop()
