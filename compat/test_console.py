"""The console in a real browser: Playwright for Python driving Debian's Chromium against
the session's server. A console user given one project signs in (a wrong password is
refused first), composes a topic notification that a `herald device` subscribed to the
topic receives, and cannot open or post to another project's pages; a form posted
without its CSRF token is refused. With HERALD_CONSOLE_SCREENSHOTS=1 the test also writes
the screenshots in docs/."""
import os
import subprocess

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


def sign_in(page, url, password):
    page.goto(f"{url}/console")
    assert page.url == f"{url}/console/sign-in"
    page.get_by_label("Name").fill("marketer")
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()


def test_a_console_user_signs_in_sends_to_a_topic_and_a_device_receives_it(herald, console, tmp_path):
    app = herald_sdk.initialize(herald.url, herald.projects["compat-semantics"]["key_file"], name="console")
    device = Device(herald, tmp_path / "console.json")
    page = console.new_page()
    try:
        assert messaging.subscribe_to_topic([device.token], "console-news", app=app).success_count == 1
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
        with page.expect_navigation():
            page.get_by_role("button", name="Send now").click()
        status = page.get_by_role("status").inner_text()
        assert status.startswith("Sent: projects/compat-semantics/messages/")
        line = device.message()
        assert line["id"] == status.rsplit("/", 1)[1]
        assert line["data"] == {"source": "console", "campaign": "spring"}
        assert line["notification"]["title"] == "Spring sale"
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
        assert page.request.post(f"{herald.url}/console/projects/compat-semantics/send",
                                 form={**form, "csrf": "x" + csrf[1:]}).status == 403
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(f"{herald.url}/console/sign-in")
        assert page.goto(f"{herald.url}/console/projects/compat-semantics").url == f"{herald.url}/console/sign-in"
    finally:
        page.close()
