"""The container image: what the Containerfile builds runs Herald as its own user, takes a
project, delivers a firebase-admin send to a device outside the container, drains on
`podman stop` and keeps its store, queued messages included, in its volume.
scripts/test-container builds the image and runs these (HERALD_IMAGE, HERALD_PODMAN)."""
import json
import os
import shlex
import subprocess
import tempfile
import time

import pytest
from firebase_admin import messaging

import herald_sdk
from conftest import HERALD, HeraldDevice, free_port, printed_fields, wait_until_healthy

IMAGE = os.environ.get("HERALD_IMAGE")
PODMAN = shlex.split(os.environ.get("HERALD_PODMAN", "podman"))
# A container here cannot raise a limit above the machine's own.
LIMITS = ["--ulimit", "nofile=16384:16384", "--ulimit", "nproc=4096:4096"]

pytestmark = pytest.mark.skipif(not IMAGE, reason="needs the image scripts/test-container builds")


def podman(*args, timeout=120):
    result = subprocess.run([*PODMAN, *args], capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"podman {' '.join(args)}: {result.stderr}{result.stdout}"
    return result.stdout.strip()


class ContainerServer:
    """A container of the image on free loopback ports, with its store in `volume`; the
    attributes HeraldDevice reads (url, gateway_port, ca_file, projects)."""

    def __init__(self, volume):
        self.volume = volume
        self.port = free_port()
        self.gateway_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.directory = tempfile.mkdtemp(prefix="herald-container-")
        self.ca_file = os.path.join(self.directory, "ca.pem")
        self.projects = {}
        self.container = None

    def start(self):
        self.container = podman(
            "run", "--detach", *LIMITS, "-p", f"127.0.0.1:{self.port}:8080", "-p", f"127.0.0.1:{self.gateway_port}:5228",
            "-v", f"{self.volume}:/var/lib/herald", IMAGE, "--public-url", self.url)
        wait_until_healthy(self.url, seconds=60)
        with open(self.ca_file, "w") as f:
            f.write(self.read("/var/lib/herald/tls/ca.pem"))

    def read(self, path):
        return podman("exec", self.container, "cat", path)

    def create_project(self, project_id):
        output = podman("exec", self.container, "herald", "project", "create", project_id, "--data-dir", "/var/lib/herald",
                        "--public-url", self.url, "--key-dir", "/var/lib/herald")
        fields = printed_fields(output)
        key_file = os.path.join(self.directory, f"{project_id}.json")
        with open(key_file, "w") as f:
            f.write(self.read(fields["key file"]))
        self.projects[project_id] = {"id": project_id, "key_file": key_file, "api_key": fields["api key"]}
        return self.projects[project_id]

    def stop(self):
        """`podman stop`: SIGTERM, then SIGKILL after 60 s. Returns the seconds it took and
        the exit code."""
        began = time.monotonic()
        podman("stop", "--time", "60", self.container, timeout=90)
        seconds = time.monotonic() - began
        code = int(podman("inspect", self.container, "--format", "{{.State.ExitCode}}"))
        podman("rm", self.container)
        self.container = None
        return seconds, code

    def remove(self):
        if self.container:
            # Shown by pytest when the test failed.
            print(subprocess.run([*PODMAN, "logs", self.container], capture_output=True, text=True, timeout=90).stderr)
            subprocess.run([*PODMAN, "rm", "--force", self.container], capture_output=True, timeout=90)


@pytest.fixture
def volume():
    name = f"herald-data-{free_port()}"
    podman("volume", "create", name)
    yield name
    subprocess.run([*PODMAN, "volume", "rm", "--force", name], capture_output=True, timeout=90)


def test_the_image_runs_herald_as_its_own_user_with_the_store_a_volume():
    assert podman("image", "inspect", IMAGE, "--format", "{{.Config.User}}") == "herald"
    assert podman("run", "--rm", *LIMITS, "--entrypoint", "id", IMAGE, "-u") == "10001"
    configuration = json.loads(podman("image", "inspect", IMAGE, "--format", "{{json .Config}}"))
    assert list(configuration["Volumes"]) == ["/var/lib/herald"]
    assert set(configuration["ExposedPorts"]) == {"8080/tcp", "5228/tcp"}
    this_build = subprocess.run([HERALD, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert podman("run", "--rm", *LIMITS, "--entrypoint", "herald", IMAGE, "--version") == this_build
    size = int(podman("image", "inspect", IMAGE, "--format", "{{.Size}}"))
    print(f"image: {size / 1e6:.0f} MB")


def test_the_image_keeps_the_package_versions_of_the_build_that_made_it():
    """Built from a context with a Package.resolved (CI's, after its tests), the image's
    packages are those versions, and it says so."""
    resolved = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Package.resolved")
    if not os.path.exists(resolved):
        pytest.skip("no Package.resolved beside Package.swift: build Herald first")
    kept = podman("run", "--rm", *LIMITS, "--entrypoint", "cat", IMAGE, "/usr/share/doc/herald/Package.resolved")

    def pins(text):
        return {pin["identity"]: pin["state"] for pin in json.loads(text)["pins"]}

    with open(resolved) as f:
        assert pins(kept) == pins(f.read())


def test_a_container_delivers_to_a_device_outside_drains_on_stop_and_keeps_queued_messages(volume, tmp_path):
    server = ContainerServer(volume)
    identity = tmp_path / "device.json"
    try:
        server.start()
        assert podman("exec", server.container, "id", "-u") == "10001"
        project = server.create_project("container-demo")
        app = herald_sdk.initialize(server.url, project["key_file"])

        device = HeraldDevice(server, "container-demo", identity)
        messaging.send(messaging.Message(token=device.token, data={"step": "delivered"}), app=app)
        assert device.message()["data"]["step"] == "delivered"
        device.stop()
        # The device is away: this one waits in the store.
        messaging.send(messaging.Message(token=device.token, data={"step": "queued"}), app=app)

        seconds, code = server.stop()
        print(f"podman stop: {seconds:.1f} s, exit code {code}")
        assert code == 0, "SIGTERM drained the node and it exited cleanly"
        assert seconds < 15, f"podman stop took {seconds:.1f} s"

        server.start()
        again = HeraldDevice(server, "container-demo", identity)
        assert again.token == device.token, "the registration is in the volume"
        assert again.message()["data"]["step"] == "queued", "the queued message is in the volume"
        again.stop()
        seconds, code = server.stop()
        assert code == 0 and seconds < 15
    finally:
        server.remove()
