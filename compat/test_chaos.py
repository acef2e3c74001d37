"""Node loss and rolling restarts under load (compat/chaos.py): 1,000 devices connected
through HAProxy (deploy/haproxy.cfg) to three nodes on PostgreSQL, firebase-admin sending
from four processes. The database failover run needs a pg_auto_failover cluster
(HERALD_FAILOVER_STORE, set by scripts/with-failover-postgres); scripts/chaos-test runs
it with a release build (RELIABILITY.md says what it shows)."""
import os
import shutil

import pytest

import chaos

needs_postgres = pytest.mark.skipif(
    not os.environ.get("HERALD_TEST_POSTGRES") or not shutil.which("haproxy"), reason="needs PostgreSQL and HAProxy")
needs_failover = pytest.mark.skipif(
    not os.environ.get("HERALD_FAILOVER_STORE"), reason="needs a pg_auto_failover cluster (scripts/chaos-test)")


def check_nothing_lost(report):
    print(vars(report))
    assert report.accepted > 1_000
    assert report.missing == 0, "every acknowledged message reached its device"


@needs_postgres
def test_a_node_dies_then_every_node_restarts_in_turn_and_no_send_fails():
    from test_cluster import new_database

    report = chaos.run(devices=1000, rate=300, failover=False, store=new_database(),
                       log=lambda text: print(text, flush=True))
    assert report.phases["herald node killed"]["failed sends"] == [], \
        f"no send failed while a node was killed; the balancer's log: {report.balancer_errors}"
    assert report.phases["rolling restart"]["failed sends"] == [], "no send failed through a rolling restart"
    assert all(seconds is not None and seconds < 15 for seconds in report.phases["rolling restart"]["seconds to stop"])
    assert report.unanswered_sends == 0
    check_nothing_lost(report)


@needs_failover
def test_the_database_primary_dies_then_a_node_then_every_node_restarts_and_nothing_acknowledged_is_lost():
    report = chaos.run(devices=1000, rate=300, log=lambda text: print(text, flush=True))
    failover = report.phases["postgres primary killed"]
    assert failover["new primary after s"] is not None, "pg_auto_failover promoted the secondary"
    assert failover["sends resumed after s"] is not None, "sends resumed by themselves"
    # Every node lived through the failover and still stops in order.
    assert all(seconds is not None and seconds < 15 for seconds in report.phases["rolling restart"]["seconds to stop"])
    assert report.phases["rolling restart"]["failed sends"] == []
    check_nothing_lost(report)
