"""The console in a real browser: Playwright for Python driving Debian's Chromium against
the session's server. A console user given one project signs in (a wrong password is
refused first), composes a topic notification, previews what each platform receives (P1-P3),
sends it, a `herald device` subscribed to the topic receives it, and the reports page shows
it accepted and delivered (L7). A send scheduled a few seconds ahead arrives; one cancelled
before its time does not. A test to an unknown token and an invalid link are refused beside
their fields. The user cannot open or post to another project's pages; a form posted
without its CSRF token is refused. With HERALD_CONSOLE_SCREENSHOTS=1 the tests also write
the screenshots in docs/."""
import datetime
import os
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from firebase_admin import messaging
from playwright import sync_api as playwright_api

import herald_sdk
from conftest import HERALD
from test_semantics import Device

CHROMIUM = "/usr/bin/chromium"
DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
PASSWORD = "a long console password"


@pytest.fixture
def console(herald):
    # Per test: Playwright's event loop must be gone before firebase-admin's apps are deleted.
    subprocess.run([HERALD, "console", "add-user", "marketer", "--project", "compat-semantics", "--data-dir",
                    herald.data_dir], input=PASSWORD + "\n", text=True, check=True, capture_output=True)
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page, name):
    if os.environ.get("HERALD_CONSOLE_SCREENSHOTS") == "1":
        page.screenshot(path=os.path.join(DOCS, name), full_page=True)


def sign_in(page, url, password, name="marketer"):
    page.goto(f"{url}/console")
    assert page.url == f"{url}/console/sign-in"
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()


def subscribed_device(herald, tmp_path, topic):
    """A `herald device` subscribed to `topic` through firebase-admin."""
    app = herald_sdk.initialize(herald.url, herald.projects["compat-semantics"]["key_file"], name=topic)
    device = Device(herald, tmp_path / f"{topic}.json")
    assert messaging.subscribe_to_topic([device.token], topic, app=app).success_count == 1
    return device


def test_a_console_user_signs_in_sends_to_a_topic_and_a_device_receives_it(herald, console, tmp_path):
    device = subscribed_device(herald, tmp_path, "console-news")
    page = console.new_page()
    try:
        sign_in(page, herald.url, "not the password")
        assert page.get_by_role("alert").inner_text() == "Wrong name or password."
        sign_in(page, herald.url, PASSWORD)
        assert page.url == f"{herald.url}/console"
        projects = page.locator("main").inner_text()
        assert "compat-semantics" in projects and "compat-alpha" not in projects

        page.get_by_role("link", name="compat-semantics").click()
        page.get_by_label("Send to").select_option("topic")
        page.get_by_label("Topic, token or condition").fill("console-news")
        page.get_by_label("Title").fill("Spring sale")
        page.get_by_label("Text").fill("Everything half price until Sunday.")
        page.get_by_label("Custom data (one key=value per line)").fill("source=console\ncampaign=spring")
        screenshot(page, "console-composer.png")
        page.get_by_label("Analytics label").fill("spring-sale")
        page.get_by_label("Link").fill("https://shop.example/spring")
        with page.expect_navigation():
            page.get_by_role("button", name="Preview").click()
        assert page.get_by_role("status").inner_text() == "Preview below: nothing was sent."
        android = page.get_by_label("Android payload").inner_text()
        assert '"gcm.notification.title": "Spring sale"' in android and '"campaign": "spring"' in android
        assert '"google.c.a.c_l": "spring-sale"' in android
        apple = page.get_by_label("Apple payload").inner_text()
        assert '"alert": {' in apple and '"title": "Spring sale"' in apple
        web = page.get_by_label("Web payload").inner_text()
        assert '"link": "https://shop.example/spring"' in web
        # The form keeps what was typed.
        assert page.get_by_label("Title").input_value() == "Spring sale"
        device.nothing(0.5)
        with page.expect_navigation():
            page.get_by_role("button", name="Send now").click()
        status = page.get_by_role("status").inner_text()
        assert status.startswith("Sent: projects/compat-semantics/messages/")
        line = device.message()
        assert line["id"] == status.rsplit("/", 1)[1]
        assert line["data"] == {"source": "console", "campaign": "spring"}
        assert line["notification"]["title"] == "Spring sale"

        # The message's page: what it was sent to, and its fanout reaching the one subscriber.
        with page.expect_navigation():
            page.get_by_role("link", name="Follow this message").click()
        table = page.get_by_role("table", name="The message")
        facts = dict(zip(table.get_by_role("rowheader").all_inner_texts(), table.get_by_role("cell").all_inner_texts()))
        assert facts["Sent to"] == "topic console-news" and facts["Analytics label"] == "spring-sale"
        assert facts["Fanout"] == "done; app instances reached: 1"

        # The reports page counts it accepted, and delivered once the device acknowledged it.
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        deadline = time.monotonic() + 10
        while True:
            page.goto(f"{herald.url}/console/projects/compat-semantics/reports?label=spring-sale")
            row = page.get_by_role("row", name=today)
            cells = [int(cell) for cell in row.get_by_role("cell").all_inner_texts()]
            accepted, delivered = cells[0], cells[1]
            if delivered >= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert accepted == 1 and delivered == 1
        assert page.locator("svg[aria-label='Delivered per day'] rect").count() == 14
        screenshot(page, "console-report.png")

        # The device's token looked up: its app, its topic, nothing waiting.
        page.get_by_role("link", name="Devices and topics").click()
        page.get_by_label("Registration token").fill(device.token)
        with page.expect_navigation():
            page.get_by_role("button", name="Look up").click()
        found = dict(zip(page.get_by_role("table", name="The app instance").get_by_role("rowheader").all_inner_texts(),
                         page.get_by_role("table", name="The app instance").get_by_role("cell").all_inner_texts()))
        assert found["State"] == "Active" and found["App"] == "com.example.semantics"
        assert "console-news" in found["Topics"].split(", ") and found["Messages waiting for the device"] == "0"
        assert int(page.get_by_role("row", name="console-news").get_by_role("cell").last.inner_text()) >= 1
    finally:
        page.close()
        device.stop()


def utc_in(seconds):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def compose(page, url, topic, title):
    page.goto(f"{url}/console/projects/compat-semantics")
    page.get_by_label("Send to").select_option("topic")
    page.get_by_label("Topic, token or condition").fill(topic)
    page.get_by_label("Title").fill(title)


def test_a_scheduled_send_arrives_on_time_and_a_cancelled_one_never_does(herald, console, tmp_path):
    device = subscribed_device(herald, tmp_path, "console-later")
    page = console.new_page()
    try:
        sign_in(page, herald.url, PASSWORD)
        compose(page, herald.url, "console-later", "Cancelled before its time")
        page.get_by_label("Send at (UTC)").fill(utc_in(8))
        with page.expect_navigation():
            page.get_by_role("button", name="Schedule").click()
        assert page.get_by_role("status").inner_text().startswith("Scheduled for ")
        compose(page, herald.url, "console-later", "A few seconds later")
        page.get_by_label("Send at (UTC)").fill(utc_in(5))
        with page.expect_navigation():
            page.get_by_role("button", name="Schedule").click()
        scheduled_at = time.monotonic()
        with page.expect_navigation():
            page.get_by_role("link", name="See the scheduled sends").click()
        with page.expect_navigation():
            page.get_by_role("button", name="Cancel Topic console-later: Cancelled before its time").click()
        assert page.get_by_role("status").inner_text() == "Cancelled."

        line = device.message(timeout=15)
        assert line["notification"]["title"] == "A few seconds later"
        # Its time was given to the second, so it went out 4 to 5 seconds after it was scheduled.
        assert time.monotonic() - scheduled_at > 2
        device.nothing(5)  # past the cancelled one's time
        page.reload()
        rows = page.get_by_role("row").all_inner_texts()
        assert any("A few seconds later" in row and "sent" in row and line["id"] in row for row in rows)
        assert any("Cancelled before its time" in row and "cancelled" in row for row in rows)
        # A time that has passed is refused beside its field.
        compose(page, herald.url, "console-later", "Too late")
        page.get_by_label("Send at (UTC)").fill(utc_in(-60))
        with page.expect_navigation():
            page.get_by_role("button", name="Schedule").click()
        assert page.locator("#send_at-error").inner_text() == "Enter a time after now, in UTC."
    finally:
        page.close()
        device.stop()


def test_a_test_send_reports_errors_beside_their_fields_and_reaches_its_token(herald, console, tmp_path):
    device = Device(herald, tmp_path / "tested.json")
    page = console.new_page()
    try:
        sign_in(page, herald.url, PASSWORD)
        compose(page, herald.url, "console-tests", "Just a test")
        page.get_by_label("Test token").fill("not-a-token-of-this-project")
        page.get_by_label("Link").fill("http://insecure.example/")
        with page.expect_navigation():
            page.get_by_role("button", name="Send a test to this token").click()
        assert page.locator("#web_link-error").inner_text() == "The link must be an https URL."
        assert page.get_by_label("Link").get_attribute("aria-invalid") == "true"
        assert page.locator("#test_token-error").count() == 0
        page.get_by_label("Link").fill("")
        with page.expect_navigation():
            page.get_by_role("button", name="Send a test to this token").click()
        assert page.locator("#test_token-error").inner_text() == (
            "The registration token is not a valid FCM registration token")
        # A well-formed token that no app instance has.
        unknown = device.token[:-4] + ("aaaa" if not device.token.endswith("aaaa") else "bbbb")
        page.get_by_label("Test token").fill(unknown)
        with page.expect_navigation():
            page.get_by_role("button", name="Send a test to this token").click()
        assert page.locator("#test_token-error").inner_text().startswith("No app instance has this token")
        page.get_by_label("Test token").fill(device.token)
        with page.expect_navigation():
            page.get_by_role("button", name="Send a test to this token").click()
        status = page.get_by_role("status").inner_text()
        assert status.startswith("Test sent to the token: ")
        line = device.message()
        assert line["id"] == status.rsplit("/", 1)[1] and line["notification"]["title"] == "Just a test"
    finally:
        page.close()
        device.stop()


def test_another_projects_pages_and_forms_are_refused_and_so_is_a_form_without_its_token(herald, console):
    page = console.new_page()
    try:
        sign_in(page, herald.url, PASSWORD)
        # A direct URL to a project the user is not given.
        assert page.goto(f"{herald.url}/console/projects/compat-alpha").status == 404
        page.goto(f"{herald.url}/console/projects/compat-semantics")
        csrf = page.locator("input[name=csrf]").first.get_attribute("value")
        form = {"csrf": csrf, "target": "topic", "to": "console-news", "title": "forged"}
        # A forged POST with the user's own session and token, to another project.
        assert page.request.post(f"{herald.url}/console/projects/compat-alpha/send", form=form).status == 404
        # The user's own project, without the token: refused before anything is read.
        del form["csrf"]
        assert page.request.post(f"{herald.url}/console/projects/compat-semantics/send", form=form).status == 403
        # A token with its first character changed (the token may begin with "x" already).
        altered = ("y" if csrf[0] == "x" else "x") + csrf[1:]
        assert page.request.post(f"{herald.url}/console/projects/compat-semantics/send",
                                 form={**form, "csrf": altered}).status == 403
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(f"{herald.url}/console/sign-in")
        assert page.goto(f"{herald.url}/console/projects/compat-semantics").url == f"{herald.url}/console/sign-in"
    finally:
        page.close()


def test_an_admin_sets_a_limit_and_sees_its_use_and_the_refusals_by_code(herald, console):
    subprocess.run([HERALD, "console", "add-user", "operator", "--admin", "--data-dir", herald.data_dir],
                   input=PASSWORD + "\n", text=True, check=True, capture_output=True)
    app = herald_sdk.initialize(herald.url, herald.projects["compat-console"]["key_file"], name="quotas")
    quotas = f"{herald.url}/console/projects/compat-console/quotas"
    page = console.new_page()
    try:
        sign_in(page, herald.url, PASSWORD, name="operator")
        page.goto(quotas)
        page.get_by_label("Downstream messages per minute").fill("2")
        with page.expect_navigation():
            page.get_by_role("button", name="Save limits").click()
        assert page.get_by_role("status").inner_text() == "Limits saved."
        # Sent without firebase-admin, which waits out a 429 and tries again.
        token = app.credential.get_access_token().access_token
        statuses = []
        for _ in range(4):
            request = urllib.request.Request(
                f"{herald.url}/v1/projects/compat-console/messages:send", data=b'{"message":{"topic":"quota-check"}}',
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    statuses.append(response.status)
            except urllib.error.HTTPError as error:
                statuses.append(error.code)
        assert statuses == [200, 200, 429, 429]
        # The node adds its error counts to the store every few seconds: the two refusals may
        # come in two additions.
        deadline = time.monotonic() + 15
        while True:
            page.goto(quotas)
            row = page.get_by_role("row", name="QUOTA_EXCEEDED")
            if row.count() == 1 and row.get_by_role("cell").all_inner_texts() == ["429", "2", "2"]:
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert row.get_by_role("cell").all_inner_texts() == ["429", "2", "2"]
        use = page.get_by_role("row", name="Downstream messages per minute").get_by_role("cell").all_inner_texts()
        assert use[0] == "T1" and use[-1] == "2"
        screenshot(page, "console-quotas.png")
        page.get_by_label("Downstream messages per minute").fill("600000")
        with page.expect_navigation():
            page.get_by_role("button", name="Save limits").click()
        assert page.get_by_role("status").inner_text() == "Limits saved."
    finally:
        page.close()


def test_an_admin_replaces_and_removes_the_projects_apns_credentials(herald, console):
    from apns_simulator import make_p8
    subprocess.run([HERALD, "console", "add-user", "apple-admin", "--admin", "--data-dir", herald.data_dir],
                   input=PASSWORD + "\n", text=True, check=True, capture_output=True)
    credentials = f"{herald.url}/console/projects/compat-console/credentials"
    page = console.new_page()
    try:
        sign_in(page, herald.url, PASSWORD, name="apple-admin")
        page.goto(credentials)
        pem = make_p8()
        for key_id, text in (("KEY0000001", "not a key"), ("KEY0000001", pem), ("KEY0000002", make_p8())):
            page.get_by_label("The .p8 file's text").fill(text)
            page.get_by_label("Key id").fill(key_id)
            page.get_by_label("Team id").fill("TEAM123456")
            page.get_by_label("Bundle id", exact=True).fill("com.example.console")
            with page.expect_navigation():
                page.get_by_role("button", name="Store, replacing the project's signing key").click()
            status = page.get_by_role("status").inner_text()
            if text == "not a key":
                assert status.startswith("Not stored: The key file is not an APNs signing key"), status
            else:
                assert status == f"Stored: token: key {key_id}, team TEAM123456, bundle com.example.console, both."
        # The second key replaced the first; the page and `herald project show` list it, never the key.
        shown = subprocess.run([HERALD, "project", "show", "compat-console", "--data-dir", herald.data_dir],
                               capture_output=True, text=True, check=True).stdout
        assert "key KEY0000002" in shown and "KEY0000001" not in shown
        assert "".join(pem.splitlines()[1:-1])[:40] not in page.content()
        screenshot(page, "console-credentials.png")
        with page.expect_navigation():
            page.get_by_role("button", name="Remove").click()
        assert page.get_by_role("status").inner_text() == "Removed."
        assert "apns credentials: none" in subprocess.run(
            [HERALD, "project", "show", "compat-console", "--data-dir", herald.data_dir],
            capture_output=True, text=True, check=True).stdout
    finally:
        page.close()
