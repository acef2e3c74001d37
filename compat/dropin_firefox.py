"""A Firefox that was never pointed at Herald: Debian's firefox-esr with its default push
server (wss://push.services.mozilla.com/), trusting Herald's drop-in CA through its profile's
NSS database (certutil), run inside a network namespace whose hosts file maps Mozilla's host
names to Herald. A page subscribes from its service worker; pywebpush then posts to the
endpoint exactly as Firefox returned it. Prints one JSON object (the endpoint, the push's
status, what the service worker saw); the test judges it."""
import json
import subprocess
import sys

from py_vapid import Vapid02

from test_firefox import Firefox, Site, application_key, push

ca = sys.argv[1]
vapid = Vapid02()
vapid.generate_keys()
site = Site(application_key(vapid))
# No push pref: only what a headless run needs to allow notifications.
firefox = Firefox(None)
result = {}
try:
    subprocess.run(["certutil", "-N", "-d", f"sql:{firefox.profile}", "--empty-password"], check=True)
    subprocess.run(["certutil", "-A", "-d", f"sql:{firefox.profile}", "-n", "herald-drop-in", "-t", "C,,", "-i", ca],
                   check=True)
    firefox.start(site.url)
    subscription = json.loads(site.report("subscription", timeout=120))
    result["endpoint"] = subscription["endpoint"]
    result["status"] = push(subscription, vapid, "hello, unmodified Firefox").status_code
    result["received"] = site.report("push")
finally:
    print(json.dumps(result))
    firefox.remove()
    site.close()
