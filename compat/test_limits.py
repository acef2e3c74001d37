"""Limits seen from firebase-admin. Rule: T1 (the project's downstream quota)."""
import asyncio
import time

import pytest
from firebase_admin import messaging

import herald_sdk


@pytest.fixture
def limited(herald):
    if "compat-limits" not in herald.projects:
        herald.projects["compat-limits"] = herald.create_project("compat-limits")
        herald.cli("project", "set", "compat-limits", "downstream-per-minute=3")
        time.sleep(1.5)  # a running server applies settings within a second
    return herald_sdk.initialize(herald.url, herald.projects["compat-limits"]["key_file"], name="limits")


def message(n):
    return messaging.Message(topic="quota", data={"n": str(n)})


def test_T1_a_project_over_its_quota_gets_quota_exceeded_and_recovers_after_the_window(limited):
    for n in range(3):
        messaging.send(message(n), app=limited)
    # The async path does not retry a 429: the error reaches the caller.
    # The loop stays open: deleting the app afterwards closes its async client on it.
    loop = asyncio.new_event_loop()
    batch = loop.run_until_complete(messaging.send_each_async([message("over")], app=limited))
    refused = batch.responses[0].exception
    assert isinstance(refused, messaging.QuotaExceededError)
    retry_after = int(refused.http_response.headers["Retry-After"])
    assert 1 <= retry_after <= 61
    # The sync path honours Retry-After: it waits for the window to move on and is accepted,
    # because the refused send did not count.
    started = time.monotonic()
    assert messaging.send(message("later"), app=limited)
    assert time.monotonic() - started >= retry_after - 1
