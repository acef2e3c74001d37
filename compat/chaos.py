"""Production failures under load (RELIABILITY.md, "Failover, node loss and rolling
restarts"): three `herald serve` nodes behind HAProxy (HTTP and the device gateway both
balanced) on a pg_auto_failover cluster (scripts/with-failover-postgres), a fleet of
devices connected through the balancer (`herald bench fleet`), and firebase-admin sending
at a steady rate, while:

1. the PostgreSQL primary is killed with SIGKILL (its keeper too: the machine is gone);
2. one Herald node is killed with SIGKILL, and started again;
3. each node in turn is stopped with SIGTERM and started again (a rolling restart).

At the end every message whose send firebase-admin answered with a name must have
reached its device. Used by compat/test_chaos.py (a short run) and scripts/chaos-test."""
import json
import multiprocessing
import os
import queue
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import types
import warnings

from firebase_admin import exceptions, messaging

import herald_sdk
from conftest import HERALD, ROOT, free_port, printed_fields, wait_until_healthy

PROJECT = "chaos-test"
# firebase-admin 7 prefers Message.fid; Herald answers both.
warnings.filterwarnings("ignore", category=DeprecationWarning)
# The pg_auto_failover cluster's URL; without one, a new database on the test server
# (then the primary cannot be killed: --no-failover).
STORE = os.environ.get("HERALD_FAILOVER_STORE")
CLUSTER_DIR = os.environ.get("HERALD_FAILOVER_DIR")


class Node:
    def __init__(self, directory, name, public_url):
        self.name = name
        self.directory = directory
        self.port = free_port()
        self.gateway_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.public_url = public_url
        self.process = None

    def start(self):
        log = open(os.path.join(self.directory, f"{self.name}.log"), "ab")
        self.process = subprocess.Popen(
            [HERALD, "serve", "--store", STORE, "--node-id", self.name, "--data-dir",
             os.path.join(self.directory, "data"), "--http-port", str(self.port), "--gateway-port",
             str(self.gateway_port), "--public-url", self.public_url, "--drain-seconds", "1.5",
             "--checkins-per-minute", "100000", "--registrations-per-minute", "100000",
             "--unauthenticated-connections-per-address", "5000",
             "--log-level", os.environ.get("HERALD_CHAOS_LOG_LEVEL", "info")],
            stdout=log, stderr=subprocess.STDOUT)
        wait_until_healthy(self.url, seconds=60)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def terminate(self):
        """SIGTERM, and the time the node took to stop; None if it had not stopped after
        40 s (then what the primary was running is printed and the node killed)."""
        started = time.time()
        self.process.terminate()
        try:
            self.process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            if CLUSTER_DIR:
                name, _ = primary_node()
                port = open(os.path.join(CLUSTER_DIR, name, "port")).read().strip()
                activity = subprocess.run(
                    ["psql", f"postgres://postgres@127.0.0.1:{port}/herald", "-Atc",
                     "SELECT pid, state, wait_event_type, wait_event, now() - state_change, left(query, 150) "
                     "FROM pg_stat_activity WHERE datname = 'herald' AND state <> 'idle'"],
                    capture_output=True, text=True)
                print(f"{self.name} did not stop; on the primary {name}:\n{activity.stdout}{activity.stderr}")
            if os.environ.get("HERALD_CHAOS_STACKS") and shutil.which("gdb"):
                with open(os.path.join(self.directory, f"{self.name}-stacks.txt"), "w") as stacks:
                    subprocess.run(["gdb", "-p", str(self.process.pid), "-batch", "-ex", "thread apply all bt 30"],
                                   stdout=stacks, stderr=subprocess.STDOUT, timeout=120)
            self.kill()
            return None
        return time.time() - started


class Balancer:
    """HAProxy running deploy/haproxy.cfg, its addresses replaced by loopback ones: the
    HTTP API round robin, the gateway by fewest connections, neither to a node whose
    health check fails (a draining one)."""

    def __init__(self, directory, nodes):
        self.http_port = free_port()
        self.gateway_port = free_port()
        with open(os.path.join(ROOT, "deploy", "haproxy.cfg")) as f:
            config = f.read()
        config = config.replace("bind :8080", f"bind 127.0.0.1:{self.http_port}")
        config = config.replace("bind :5228", f"bind 127.0.0.1:{self.gateway_port}")
        for index, node in enumerate(nodes, start=1):
            address = f"10.0.0.1{index}"
            config = config.replace(
                f"{address}:5228 check port 8080", f"127.0.0.1:{node.gateway_port} check port {node.port}")
            config = config.replace(f"{address}:8080 check", f"127.0.0.1:{node.port} check")
        assert "10.0.0." not in config and ":8080" not in config and ":5228" not in config
        # Requests that ended other than normally are logged, to explain a failed send.
        config = config.replace("global\n", "global\n    log stderr format raw local0\n", 1)
        config = config.replace("frontend api\n", "frontend api\n    log global\n    option httplog\n    option dontlog-normal\n")
        self.log = os.path.join(directory, "haproxy.log")
        path = os.path.join(directory, "haproxy.cfg")
        with open(path, "w") as f:
            f.write(config)
        self.process = subprocess.Popen(["haproxy", "-db", "-f", path], stdout=subprocess.DEVNULL,
                                        stderr=open(self.log, "ab"))
        self.url = f"http://127.0.0.1:{self.http_port}"


class Fleet:
    """`herald bench fleet`: its devices, and what each received (message ids in order)."""

    def __init__(self, directory, balancer, project, devices):
        identities = os.path.join(directory, "fleet.json")
        self.process = subprocess.Popen(
            [HERALD, "bench", "fleet", "--url", balancer.url, "--credentials", project["key_file"], "--api-key",
             project["api_key"], "--gateway", f"127.0.0.1:{balancer.gateway_port}", "--ca",
             os.path.join(directory, "data", "tls", "ca.pem"), "--devices", str(devices), "--instances",
             identities],
            stdout=subprocess.PIPE, stderr=open(os.path.join(directory, "fleet.log"), "ab"), text=True)
        self.received = {}
        self.reconnects = 0
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(timeout=180):
            self.process.kill()
            raise RuntimeError("the fleet did not connect")
        with open(identities) as f:
            instances = json.load(f)
        self.tokens = [instance["token"] for instance in instances]
        self.android_ids = [instance["androidID"] for instance in instances]

    def _read(self):
        for line in self.process.stdout:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "message":
                device, _, message = rest.partition(" ")
                self.received.setdefault(int(device), []).append(message)
            elif kind == "reconnected":
                self.reconnects += 1
            elif kind == "ready":
                self.ready.set()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


class Load:
    """firebase-admin sending to random devices at `rate` a second, from `processes` sender
    processes of `threads` threads each (one Python process cannot send 300 a second); what
    was named (owed), and every send that raised after the SDK's own retries."""

    def __init__(self, url, key_file, tokens, rate, processes=4, threads=6):
        self.owed = {}
        self.errors = []  # (time, error text)
        self.accepted_at = []  # times of named sends
        self.accepted_when = {}  # message id: when it was named
        self.lock = threading.Lock()
        context = multiprocessing.get_context("spawn")
        self.stop = context.Event()
        self.events = context.Queue()
        interval = processes * threads / rate
        self.processes = [
            context.Process(target=send_from, args=(url, key_file, tokens, interval, threads, self.stop, self.events),
                            daemon=True) for _ in range(processes)]
        for process in self.processes:
            process.start()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            try:
                event = self.events.get(timeout=0.2)
            except queue.Empty:
                if self.stop.is_set() and not any(process.is_alive() for process in self.processes):
                    return
                continue
            with self.lock:
                if event[0] == "named":
                    _, at, device, message = event
                    self.owed.setdefault(device, []).append(message)
                    self.accepted_at.append(at)
                    self.accepted_when[message] = at
                else:
                    _, at, text = event
                    self.errors.append((at, text))

    def accepted_since(self, moment):
        with self.lock:
            return sum(1 for at in self.accepted_at if at > moment)

    def rate_between(self, start, end):
        """Sends accepted a second from `start` to `end`."""
        with self.lock:
            accepted = sum(1 for at in self.accepted_at if start < at <= end)
        return round(accepted / max(end - start, 0.001), 1)

    def errors_between(self, start, end):
        with self.lock:
            return [text for at, text in self.errors if start <= at <= end]

    def sent(self):
        with self.lock:
            return len(self.accepted_at) + len(self.errors)

    def finish(self, seconds=150):
        """Stops sending; answers how many sender processes still waited for an answer
        after `seconds` (the SDK's own timeout is longer)."""
        self.stop.set()
        deadline = time.time() + seconds
        for process in self.processes:
            process.join(timeout=max(0, deadline - time.time()))
        unanswered = sum(1 for process in self.processes if process.is_alive())
        for process in self.processes:
            if process.is_alive():
                process.kill()
        self.reader.join(timeout=10)
        return unanswered


def send_from(url, key_file, tokens, interval, threads, stop, events):
    """One sender process: `threads` threads, each sending once every `interval` seconds
    to a random device until `stop`; each answer goes to `events`."""
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    app = herald_sdk.initialize(url, key_file, name=f"chaos-sender-{os.getpid()}")

    def send():
        next_at = time.time() + random.uniform(0, interval)
        while not stop.is_set():
            delay = next_at - time.time()
            if delay > 0:
                time.sleep(delay)
            next_at = max(next_at + interval, time.time() - 1)
            device = random.randrange(len(tokens))
            try:
                name = messaging.send(messaging.Message(token=tokens[device], data={"chaos": "1"}), app=app)
                events.put(("named", time.time(), device, name.rsplit("/", 1)[1]))
            except (exceptions.FirebaseError, OSError, ValueError) as error:
                events.put(("failed", time.time(), f"{type(error).__name__}: {error}"[:200]))

    workers = [threading.Thread(target=send) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def cpu_seconds(nodes, fleet, load, balancer):
    """CPU time used so far (user and system, from /proc) by each part of the run: the
    nodes, PostgreSQL (every `postgres` process), the fleet, the senders and HAProxy."""
    def of(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return 0.0

    def named(program):
        total = 0.0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() == program:
                        total += of(entry)
            except OSError:
                pass
        return total

    return {"nodes": sum(of(node.process.pid) for node in nodes), "postgres": named("postgres"),
            "fleet": of(fleet.process.pid), "senders": sum(of(process.pid) for process in load.processes),
            "haproxy": of(balancer.process.pid)}


def explain_missing(missing, fleet, load, started):
    """What the store holds of each missing message: whether it was stored, whether it still
    waits in its device's queue, and which node claims the device."""
    explained = []
    for device, message in missing[:20]:
        android_id = fleet.android_ids[device]
        query = (f"SELECT (SELECT count(*) FROM messages WHERE id = '{message}'), "
                 f"(SELECT string_agg(sequence::text, ',') FROM device_queue WHERE message_id = '{message}'), "
                 f"(SELECT coalesce(holder_node, '-') FROM devices WHERE android_id = {android_id}), "
                 f"(SELECT count(*) FROM device_queue WHERE android_id = {android_id})")
        answer = subprocess.run(["psql", STORE, "-AtF", " ", "-c", query], capture_output=True, text=True, timeout=20)
        explained.append({
            "device": device, "android id": android_id, "message": message,
            "accepted after s": round(load.accepted_when.get(message, 0) - started, 1),
            "stored, queue sequence, holder, queued for device": (answer.stdout or answer.stderr).strip(),
            "received by device": len(fleet.received.get(device, []))})
    return explained


def primary_node():
    """The pg_auto_failover data node that is the primary now: (name, its directory)."""
    for name in ("node-1", "node-2"):
        port = open(os.path.join(CLUSTER_DIR, name, "port")).read().strip()
        result = subprocess.run(["psql", f"postgres://postgres@127.0.0.1:{port}/herald", "-Atqc",
                                 "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'"],
                                capture_output=True, text=True, timeout=5)
        if result.stdout.strip() == "t":
            return name, os.path.join(CLUSTER_DIR, name)
    return None, None


def kill_primary():
    """Kills the primary's keeper and PostgreSQL with SIGKILL (its process group: the
    machine is gone); answers the node's name."""
    name, directory = primary_node()
    assert name, "no primary to kill"
    group = int(open(os.path.join(directory, "keeper.pid")).read())
    with open(os.path.join(directory, "pgdata", "postmaster.pid")) as f:
        postmaster = int(f.readline())
    for kill in (lambda: os.killpg(group, signal.SIGKILL), lambda: os.kill(postmaster, signal.SIGKILL)):
        try:
            kill()
        except ProcessLookupError:
            pass
    subprocess.run(["pkill", "-KILL", "-f", os.path.join(directory, "pgdata")], check=False)
    return name


def lose_the_primary(load, settle):
    """Kills the PostgreSQL primary; answers how long until another was writable and until
    sends were accepted again, and how many sends failed after the SDK's retries."""
    started = time.time()
    killed = kill_primary()
    promoted = resumed = None
    while time.time() - started < 120:
        name, _ = primary_node()
        if name and name != killed:
            promoted = time.time() - started
            break
        time.sleep(0.2)
    while time.time() - started < 150:
        if load.accepted_since(started + (promoted or 0)) > 0:
            resumed = time.time() - started
            break
        time.sleep(0.1)
    time.sleep(settle)
    return {"killed": killed, "new primary after s": promoted and round(promoted, 1),
            "sends resumed after s": resumed and round(resumed, 1),
            "sends a second once resumed": resumed and load.rate_between(started + resumed, time.time()),
            "failed sends": len(load.errors_between(started, time.time()))}


def lose_a_node(load, nodes, settle):
    """Kills one node with SIGKILL, and starts it again after `settle` seconds."""
    started = time.time()
    victim = random.choice(nodes)
    victim.kill()
    time.sleep(settle)
    victim.start()
    time.sleep(2)
    return {"node": victim.name, "sends a second": load.rate_between(started, time.time()),
            "failed sends": load.errors_between(started, time.time())}


def restart_in_turn(load, nodes):
    """Stops each node with SIGTERM and starts it again, one after another."""
    started = time.time()
    stops = []
    for node in nodes:
        seconds = node.terminate()
        stops.append(seconds and round(seconds, 1))
        node.start()
        time.sleep(3)
    return {"seconds to stop": stops, "sends a second": load.rate_between(started, time.time()),
            "failed sends": load.errors_between(started, time.time())}


def run(devices=1000, rate=300, settle=8, failover=True, node_loss=True, rolling=True, store=None,
        log=lambda text: None):
    global STORE
    if store or STORE is None:
        from test_cluster import new_database
        STORE = store or new_database()
    directory = tempfile.mkdtemp(prefix="herald-chaos-")
    nodes, balancer, fleet, load = [], None, None, None
    report = types.SimpleNamespace(devices=devices, rate=rate, phases={})
    started = time.time()
    try:
        nodes = [Node(directory, f"n{index}", "") for index in range(1, 4)]
        balancer = Balancer(directory, nodes)
        for node in nodes:
            node.public_url = balancer.url
        output = subprocess.run(
            [HERALD, "project", "create", PROJECT, "--store", STORE, "--public-url", balancer.url, "--key-dir",
             directory], capture_output=True, text=True, check=True, timeout=60).stdout
        fields = printed_fields(output)
        project = {"api_key": fields["api key"], "key_file": fields["key file"]}
        subprocess.run([HERALD, "project", "set", PROJECT, "--store", STORE, "device-per-minute=100000",
                        "device-per-hour=100000", "max-pending=100000", "downstream-per-minute=1000000"],
                       capture_output=True, check=True, timeout=60)
        for node in nodes:
            node.start()
        wait_until_healthy(balancer.url, seconds=30)
        fleet = Fleet(directory, balancer, project, devices)
        log(f"{devices} devices connected through HAProxy to {len(nodes)} nodes")
        load = Load(balancer.url, project["key_file"], fleet.tokens, rate)
        load_began = time.time()
        time.sleep(2)
        cpu_began = cpu_seconds(nodes, fleet, load, balancer)
        time.sleep(settle - 2)
        cpu = cpu_seconds(nodes, fleet, load, balancer)
        started = time.time()
        # Before anything fails: the rate the senders keep up (the first two seconds start them),
        # and the CPU each part of the run used for a send meanwhile.
        steady = load.accepted_since(load_began + 2) - load.accepted_since(started)
        report.steady_sends_per_second = round(steady / (started - load_began - 2), 1)
        report.steady_cpu_ms_per_send = {
            part: round(1000 * (cpu[part] - cpu_began[part]) / max(steady, 1), 2) for part in cpu}

        if failover:
            report.phases["postgres primary killed"] = lose_the_primary(load, settle)
            log(f"PostgreSQL primary killed: {report.phases['postgres primary killed']}")
        if node_loss:
            report.phases["herald node killed"] = lose_a_node(load, nodes, settle)
            log(f"Herald node killed: {report.phases['herald node killed']}")
        if rolling:
            report.phases["rolling restart"] = restart_in_turn(load, nodes)
            log(f"rolling restart: {report.phases['rolling restart']}")
        time.sleep(2)
        report.sends_per_second = round(load.sent() / (time.time() - load_began), 1)
        report.unanswered_sends = load.finish()

        owed = load.owed
        deadline = time.time() + 90
        while time.time() < deadline:
            if all(set(ids) <= set(fleet.received.get(d, [])) for d, ids in owed.items()):
                break
            time.sleep(0.5)
        time.sleep(2)
        report.accepted = sum(len(ids) for ids in owed.values())
        report.failed_sends = len(load.errors)
        report.delivered = sum(len(set(ids) & set(fleet.received.get(d, []))) for d, ids in owed.items())
        missing = [(d, i) for d, ids in owed.items() for i in sorted(set(ids) - set(fleet.received.get(d, [])))]
        report.missing = len(missing)
        if missing:
            report.missing_explained = explain_missing(missing, fleet, load, started)
        report.duplicates = sum(len(ids) - len(set(ids)) for ids in fleet.received.values())
        owed_ids = {i for ids in owed.values() for i in ids}
        report.unowed = sum(1 for ids in fleet.received.values() for i in set(ids) if i not in owed_ids)
        report.reconnects = fleet.reconnects
        report.sample_errors = [text for _, text in load.errors[:5]]
        with open(balancer.log, errors="replace") as f:
            report.balancer_errors = [
                line.strip() for line in f if " api herald_http" in line and " 200 " not in line][-10:]
        return report
    finally:
        if load:
            load.finish(seconds=0)
        if fleet:
            fleet.stop()
        for node in nodes:
            if node.process and node.process.poll() is None:
                node.process.kill()
        if balancer:
            balancer.process.kill()
        if os.environ.get("HERALD_CHAOS_KEEP"):
            print(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def main():
    import argparse

    parser = argparse.ArgumentParser(description="Failover, node loss and a rolling restart under load.")
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=300)
    parser.add_argument("--no-failover", action="store_true", help="keep the PostgreSQL primary")
    parser.add_argument("--no-node-loss", action="store_true", help="kill no Herald node")
    parser.add_argument("--no-rolling", action="store_true", help="restart no node in turn")
    arguments = parser.parse_args()
    report = run(devices=arguments.devices, rate=arguments.rate, failover=not arguments.no_failover,
                 node_loss=not arguments.no_node_loss, rolling=not arguments.no_rolling, log=lambda text: print(f"  {text}", flush=True))
    print(json.dumps(vars(report), indent=1))
    if report.missing or report.phases.get("rolling restart", {}).get("failed sends"):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
