"""A rolling upgrade: a node of the previous release (scripts/build-previous-release builds
it from this repository's history; HERALD_PREVIOUS_BIN) and a node of this build share one
PostgreSQL database. The previous release's node creates the database; this build's node
migrates it forward while the other runs; each node's sends then reach the other's
devices, a topic reaches devices on both, and once the previous release's node stops its
devices come back through this build's node and receive what waited for them, including a
message stored before the upgrade began. docs/operations.md, Upgrades."""
import os
import shutil

import pytest
from firebase_admin import messaging

import herald_sdk
from test_cluster import POSTGRES, PROJECT, Node, create_projects, message_id, new_cluster
from test_semantics import Device

PREVIOUS = os.environ.get("HERALD_PREVIOUS_BIN")
pytestmark = pytest.mark.skipif(
    not POSTGRES or not PREVIOUS,
    reason="needs PostgreSQL and the previous release's binary (scripts/test sets HERALD_PREVIOUS_BIN)")


def test_nodes_of_the_previous_release_and_this_one_deliver_to_each_others_devices(tmp_path):
    cluster = new_cluster()
    previous = Node(cluster, "previous", binary=PREVIOUS)
    current = Node(cluster, "current")
    devices = []

    def device(node, name):
        devices.append(Device(node, tmp_path / f"{name}.json"))
        return devices[-1]

    try:
        create_projects(cluster, (PROJECT,), previous.url, binary=PREVIOUS)
        key_file = cluster.projects[PROJECT]["key_file"]
        previous.start()
        on_previous = device(previous, "on-previous")
        away = device(previous, "away")
        away.stop()
        through_previous = herald_sdk.initialize(previous.url, key_file, name="upgrade-previous")
        before_upgrade = messaging.send(messaging.Message(token=away.token, data={"when": "before"}),
                                        app=through_previous)

        current.start()  # migrates the schema forward while the previous release's node runs
        on_current = device(current, "on-current")
        through_current = herald_sdk.initialize(current.url, key_file, name="upgrade-current")

        name = messaging.send(messaging.Message(token=on_current.token, data={"via": "previous"}),
                              app=through_previous)
        assert on_current.message()["id"] == message_id(name)
        name = messaging.send(messaging.Message(token=on_previous.token, data={"via": "current"}),
                              app=through_current)
        assert on_previous.message()["id"] == message_id(name)

        tokens = [on_previous.token, on_current.token]
        assert messaging.subscribe_to_topic(tokens, "upgrade", app=through_previous).success_count == 2
        name = messaging.send(messaging.Message(topic="upgrade", data={"to": "both"}), app=through_current)
        assert on_previous.message()["id"] == on_current.message()["id"] == message_id(name)

        # The previous release's node stops; its device comes back through this build's.
        on_previous.stop()
        previous.stop()
        while_away = messaging.send(messaging.Message(token=on_previous.token, data={"when": "during"}),
                                    app=through_current)
        back = device(current, "on-previous")
        assert back.token == on_previous.token
        assert back.message()["id"] == message_id(while_away)
        returned = device(current, "away")
        assert returned.message()["id"] == message_id(before_upgrade)
    finally:
        for each in devices:
            if each.process.poll() is None:
                each.process.kill()
        for node in (previous, current):
            if node.process and node.process.poll() is None:
                node.process.kill()
        shutil.rmtree(cluster.directory, ignore_errors=True)
