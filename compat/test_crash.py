"""The short crash test (compat/crash.py): a server killed with SIGKILL twice under load
loses no accepted message and delivers none twice, with SQLite and with PostgreSQL.
Rules: L4, T3."""
import os

import pytest

import crash


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_L4_killing_the_server_under_load_loses_and_repeats_no_accepted_message(backend, tmp_path):
    store = None
    if backend == "postgres":
        if not os.environ.get("HERALD_TEST_POSTGRES"):
            pytest.skip("no PostgreSQL: run through scripts/test (HERALD_TEST_POSTGRES)")
        from test_cluster import new_database
        store = new_database()
    report = crash.run(store=store, online=3, offline=3, kills=2, senders=2)
    assert report.accepted_token_sends > 20 and report.accepted_topic_sends > 2, report
    assert report.missing == 0, report
    assert report.duplicates == 0, report
