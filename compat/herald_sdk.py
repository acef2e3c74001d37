"""The one place that points the official firebase-admin SDK at a Herald server.

firebase-admin 7.x has no setting for the FCM host, so three attributes are replaced:
the send URL and topic-subscription URL of the app's messaging service, and the
Instance ID base URL used by the legacy topic calls.
"""
import firebase_admin
from firebase_admin import credentials, messaging


def initialize(base_url, key_file=None, credential=None, name=None, project_id=None):
    """Initialize a firebase-admin app whose messaging calls go to Herald at base_url."""
    if credential is None:
        credential = credentials.Certificate(key_file)
    options = {"projectId": project_id} if project_id else None
    app = firebase_admin.initialize_app(credential, options, name=name or f"herald-{id(credential)}")
    redirect(app, base_url)
    return app


def redirect(app, base_url):
    """Send an app's messaging traffic to Herald instead of Google."""
    base = base_url.rstrip("/")
    service = messaging._get_messaging_service(app)
    service._fcm_url = f"{base}/v1/projects/{service._project_id}/messages:send"
    service._fcm_topic_url = f"{base}/v1/projects/{service._project_id}/registrations"
    messaging._MessagingService.IID_URL = base
    return service


def redirect_receiver(base_url, gateway_port, ca_file):
    """Point the firebase-messaging receiver (0.4.5) at Herald: its registration endpoints
    are module attributes of fcmregister, its MCS endpoint those of fcmpushclient, and it
    trusts the CA named by SSL_CERT_FILE for the TLS connection."""
    import os

    from firebase_messaging import fcmpushclient, fcmregister

    base = base_url.rstrip("/")
    fcmregister.GCM_CHECKIN_URL = f"{base}/checkin"
    fcmregister.GCM_REGISTER_URL = f"{base}/c2dm/register3"
    fcmregister.FCM_INSTALLATION = f"{base}/v1/"
    fcmregister.FCM_REGISTRATION = f"{base}/v1/"
    fcmpushclient.MCS_HOST = "127.0.0.1"
    fcmpushclient.MCS_PORT = gateway_port
    os.environ["SSL_CERT_FILE"] = ca_file


def iid_info(base_url, token, app):
    """`GET /iid/info/{token}?details=true` with the app's access token: the app instance
    and its topics (`rel.topics`)."""
    import json
    import urllib.parse
    import urllib.request

    access_token = app.credential.get_access_token().access_token
    request = urllib.request.Request(
        f"{base_url.rstrip('/')}/iid/info/{urllib.parse.quote(token, safe='')}?details=true",
        headers={"Authorization": f"Bearer {access_token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
