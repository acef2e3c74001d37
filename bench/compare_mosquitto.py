#!/usr/bin/env python3
"""Herald beside Mosquitto on this machine, in one run, with the same message size and
subscriber counts:

  (a) fanout: one message to N connected subscribers (a topic send / an MQTT publish);
  (b) one-to-one latency at a fixed rate over D devices (subscribers on their own topics);
  (c) drain: K messages stored for an offline app instance / a persistent-session
      subscriber (QoS 1, clean session off), delivered once it connects.

Each system runs twice, in plaintext and then with TLS (TLS 1.3, a P-256 certificate, the
clients checking it). Herald is driven by `herald bench fanout|e2e|drain` against a
release server; Mosquitto by paho-mqtt (QoS 1 both ways), with as many subscriber
processes as there are cores. The results go to the
terminal and, with --write, into BENCHMARKS.md between the comparison markers.

Run it through scripts/compare-mosquitto, which installs what it needs.
"""

import argparse
import datetime
import getpass
import json
import multiprocessing
import os
import platform
import resource
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import paho.mqtt
import paho.mqtt.client as mqtt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- mosquitto comparison: begin -->"
END = "<!-- mosquitto comparison: end -->"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User plus system CPU seconds of a process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- Herald


class Herald:
    """A release `herald serve` with one project set up for the three measurements."""

    def __init__(self, binary, tls, messages):
        self.binary = binary
        self.tls = tls
        self.work = tempfile.mkdtemp(prefix="herald-compare-")
        self.http = free_port()
        self.gateway = free_port()
        data = os.path.join(self.work, "data")
        created = subprocess.run(
            [binary, "project", "create", "bench-project", "--data-dir", data, "--key-dir", self.work,
             "--public-url", f"http://127.0.0.1:{self.http}"],
            check=True, capture_output=True, text=True).stdout
        self.api_key = next(line.split()[2] for line in created.splitlines() if line.startswith("api key"))
        # Subscribing N tokens, K messages pending for one instance and K sent to it in a
        # minute are past FCM's defaults (T2, D1, T6); these runs measure delivery.
        subprocess.run(
            [binary, "project", "set", "bench-project", "topic-ops-per-second=1000000",
             f"max-pending={max(messages, 100)}", "device-per-minute=1000000", "device-per-hour=1000000",
             "--data-dir", data], check=True, capture_output=True)
        flags = [] if tls else ["--gateway-plaintext"]
        # Thousands of devices log in from one address at once, so the bounds on connections
        # not yet logged in are lifted. A free port can be taken by a client's outgoing
        # connection before the server binds it (the earlier runs opened thousands): then
        # start again on other ports.
        for _ in range(5):
            self.process = subprocess.Popen(
                [binary, "serve", "--checkins-per-minute", "0", "--registrations-per-minute", "0",
                 "--device-registrations-per-minute", "0", "--unauthenticated-connections-per-address", "0",
                 "--unauthenticated-connections", "0", "--data-dir", data, "--http-port", str(self.http), "--gateway-port",
                 str(self.gateway), "--log-level", "warning", *flags])
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{self.http}/healthz", timeout=1)
                    return
                except OSError:
                    time.sleep(0.1)
            self.process.kill()
            self.process.wait()
            self.http, self.gateway = free_port(), free_port()
        raise RuntimeError("herald serve did not become healthy")

    def bench(self, name, *arguments):
        trust = ["--ca", os.path.join(self.work, "data", "tls", "ca.pem")] if self.tls else ["--plaintext"]
        result = subprocess.run(
            [self.binary, "bench", name, "--url", f"http://127.0.0.1:{self.http}",
             "--credentials", os.path.join(self.work, "bench-project-service-account.json"),
             "--api-key", self.api_key, "--gateway", f"127.0.0.1:{self.gateway}", *trust, *arguments, "--json"],
            check=True, capture_output=True, text=True)
        return json.loads(result.stdout.strip().splitlines()[-1])

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.work, ignore_errors=True)


def measure_herald(binary, tls, options):
    server = Herald(binary, tls, options.messages)
    try:
        pid = str(server.process.pid)
        fanout = server.bench("fanout", "--subscribers", str(options.subscribers), "--connected",
                              str(options.subscribers), "--payload-bytes", str(options.payload), "--server-pid", pid)
        e2e = server.bench("e2e", "--rate", str(options.rate), "--seconds", str(options.seconds), "--devices",
                           str(options.devices), "--payload-bytes", str(options.payload), "--server-pid", pid)
        drain = server.bench("drain", "--messages", str(options.messages), "--payload-bytes", str(options.payload),
                             "--server-pid", pid)
    finally:
        server.stop()
    return {
        "fanout_per_second": fanout["connected_deliveries_per_second"],
        "fanout_received": fanout["connected_received"],
        "fanout_cpu_us": fanout["server_cpu_seconds"] * 1e6 / max(1, fanout["connected_received"]),
        "p50_us": e2e["p50_us"], "p99_us": e2e["p99_us"], "e2e_received": e2e["received"],
        "e2e_cpu_us": e2e["server_cpu_seconds"] * 1e6 / max(1, e2e["received"]),
        "e2e_sent": e2e["sent"],
        "drain_seconds": drain["drain_seconds"], "drain_received": drain["received"],
        "drain_cpu_us": drain["server_cpu_seconds"] * 1e6 / max(1, drain["received"]),
    }


# ---------------------------------------------------------------- Mosquitto


class Mosquitto:
    def __init__(self, messages, tls):
        self.work = tempfile.mkdtemp(prefix="mosquitto-compare-")
        self.port = free_port()
        self.ca = None
        listener = f"listener {self.port} 127.0.0.1\n"
        if tls:
            # A self-signed P-256 certificate for 127.0.0.1, as Herald's gateway presents;
            # the clients trust it and check it.
            self.ca = os.path.join(self.work, "server.pem")
            key = os.path.join(self.work, "server.key")
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                 "-keyout", key, "-out", self.ca], check=True, capture_output=True)
            listener += f"certfile {self.ca}\nkeyfile {key}\n"
        config = os.path.join(self.work, "mosquitto.conf")
        with open(config, "w") as f:
            # The same in-flight window as Herald's gateway (100), a queue that holds the
            # drain run, no connection limit; messages kept in memory (persistence off).
            # It runs as whoever runs this script (run as root, it would drop to its own user
            # and could not read the key).
            f.write(f"user {getpass.getuser()}\n{listener}allow_anonymous true\npersistence false\n"
                    f"max_inflight_messages 100\nmax_queued_messages {max(messages, 1000)}\n"
                    "max_connections -1\nlog_dest none\n")
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.process = subprocess.Popen([binary, "-c", config])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    @property
    def endpoint(self):
        """Where clients connect: (port, the certificate to trust or None for plaintext)."""
        return (self.port, self.ca)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.work, ignore_errors=True)


class LoopbackClient(mqtt.Client):
    """paho binds each socket to port 0 before connecting it, and such a bind finds no free
    port while the last system's tens of thousands of connections are in TIME_WAIT;
    connecting unbound lets Linux reuse those ports on loopback (tcp_tw_reuse)."""

    def _create_socket_connection(self):
        return socket.create_connection((self._host, self._port), timeout=self._connect_timeout)


def new_client(client_id, endpoint, clean=True):
    client = LoopbackClient(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean,
                         protocol=mqtt.MQTTv311)
    if endpoint[1]:
        client.tls_set(ca_certs=endpoint[1])
    return client


def connect(client, endpoint):
    client.connect("127.0.0.1", endpoint[0], keepalive=600)
    client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class ClientLoop:
    """Many paho clients in one process, driven by one selector (paho's external loop)."""

    def __init__(self):
        self.selector = selectors.DefaultSelector()
        self.clients = []

    def add(self, client, endpoint):
        connect(client, endpoint)
        self.selector.register(client.socket(), selectors.EVENT_READ, client)
        self.clients.append(client)
        client.loop_write()

    def run(self, until, timeout):
        deadline = time.monotonic() + timeout
        while not until() and time.monotonic() < deadline:
            for key, _ in self.selector.select(0.05):
                key.data.loop_read()
                if key.data.want_write():
                    key.data.loop_write()
            for client in self.clients:
                # Records TLS has already decrypted wait in the socket, unseen by select.
                pending = getattr(client.socket(), "pending", None)
                if pending and pending():
                    client.loop_read()
                if client.want_write():
                    client.loop_write()


def subscriber_worker(endpoint, first, count, topic_of, payload_seq, commands, replies):
    """Connects `count` subscribers, reports readiness, then records each receipt's time
    (and, for latency runs, the latency from the send time in the payload)."""
    loop = ClientLoop()
    state = {"subscribed": 0, "received": 0, "last": 0.0, "latencies": []}

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        state["subscribed"] += 1

    def on_message(client, userdata, message):
        now = time.monotonic_ns()
        state["received"] += 1
        state["last"] = now
        if payload_seq:
            sent = int(message.payload.split(b" ", 1)[0])
            state["latencies"].append(now - sent)

    for index in range(first, first + count):
        client = new_client(f"sub-{index}", endpoint)
        client.on_subscribe = on_subscribe
        client.on_message = on_message
        loop.add(client, endpoint)
        client.subscribe(topic_of(index), qos=1)
        client.loop_write()
        if index % 100 == 99:
            loop.run(lambda: False, 0)
    loop.run(lambda: state["subscribed"] >= count, 60)
    replies.put(state["subscribed"])
    expected = []  # how many messages to wait for, once the main process says

    def done():
        if not expected and not commands.empty():
            expected.append(commands.get())
        return bool(expected) and state["received"] >= expected[0]

    loop.run(done, 120)
    replies.put({"received": state["received"], "last": state["last"], "latencies": state["latencies"]})


def fanout_topic(_):
    return "bench/fanout"


def device_topic(index):
    return f"bench/device/{index}"


def start_subscribers(endpoint, total, topic_of, payload_seq):
    workers = []
    share = -(-total // os.cpu_count())
    for first in range(0, total, share):
        commands, replies = multiprocessing.Queue(), multiprocessing.Queue()
        process = multiprocessing.Process(
            target=subscriber_worker,
            args=(endpoint, first, min(share, total - first), topic_of, payload_seq, commands, replies))
        process.start()
        workers.append((process, commands, replies))
    for _, _, replies in workers:
        replies.get(timeout=120)
    return workers


def collect(workers, expected_per_worker):
    for (_, commands, _), expected in zip(workers, expected_per_worker):
        commands.put(expected)
    outcomes = []
    for process, _, replies in workers:
        outcomes.append(replies.get(timeout=120))
        process.join()
    return outcomes


def publisher(endpoint):
    client = new_client("publisher", endpoint)
    connect(client, endpoint)
    client.loop_start()
    return client


def mosquitto_fanout(endpoint, pid, options):
    workers = start_subscribers(endpoint, options.subscribers, fanout_topic, False)
    time.sleep(0.5)
    client = publisher(endpoint)
    cpu_before = cpu_seconds(pid)
    sent = time.monotonic_ns()
    client.publish("bench/fanout", b"x" * options.payload, qos=1).wait_for_publish(10)
    shares = [share_of(options.subscribers, len(workers), index) for index in range(len(workers))]
    outcomes = collect(workers, shares)
    cpu_after = cpu_seconds(pid)
    client.loop_stop()
    client.disconnect()
    received = sum(o["received"] for o in outcomes)
    seconds = (max(o["last"] for o in outcomes) - sent) / 1e9
    return received, received / seconds, (cpu_after - cpu_before) * 1e6 / max(1, received)


def share_of(total, parts, index):
    share = -(-total // parts)
    return min(share, total - index * share)


def mosquitto_latency(endpoint, pid, options):
    total = int(options.rate * options.seconds)
    workers = start_subscribers(endpoint, options.devices, device_topic, True)
    client = publisher(endpoint)
    fill = b"x" * options.payload
    cpu_before = cpu_seconds(pid)
    start = time.monotonic()
    for index in range(total):
        due = start + index / options.rate
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        client.publish(device_topic(index % options.devices), str(time.monotonic_ns()).encode() + b" " + fill, qos=1)
    expected = [0] * len(workers)
    share = -(-options.devices // len(workers))
    for index in range(total):
        expected[(index % options.devices) // share] += 1
    outcomes = collect(workers, expected)
    cpu_after = cpu_seconds(pid)
    client.loop_stop()
    client.disconnect()
    latencies = sorted(latency for o in outcomes for latency in o["latencies"])

    def percentile(p):
        return latencies[min(len(latencies) - 1, max(0, int(p * len(latencies) + 0.999999) - 1))] / 1000

    cpu_us = (cpu_after - cpu_before) * 1e6 / max(1, len(latencies))
    return total, len(latencies), percentile(0.50), percentile(0.99), cpu_us


def mosquitto_drain(endpoint, pid, options):
    subscriber = new_client("drain-subscriber", endpoint, clean=False)
    connect(subscriber, endpoint)
    subscriber.loop_start()
    subscriber.subscribe("bench/drain", qos=1)[1]
    time.sleep(0.2)
    subscriber.loop_stop()
    subscriber.disconnect()
    client = publisher(endpoint)
    fill = b"x" * options.payload
    infos = [client.publish("bench/drain", b"%d " % index + fill, qos=1) for index in range(options.messages)]
    for info in infos:
        info.wait_for_publish(30)
    client.loop_stop()
    client.disconnect()
    time.sleep(0.2)

    state = {"received": 0, "last": 0}

    def on_message(client, userdata, message):
        state["received"] += 1
        state["last"] = time.monotonic_ns()

    loop = ClientLoop()
    reconnecting = new_client("drain-subscriber", endpoint, clean=False)
    reconnecting.on_message = on_message
    cpu_before = cpu_seconds(pid)
    started = time.monotonic_ns()
    loop.add(reconnecting, endpoint)
    loop.run(lambda: state["received"] >= options.messages, 60)
    cpu_after = cpu_seconds(pid)
    reconnecting.disconnect()
    return state["received"], (state["last"] - started) / 1e9, \
        (cpu_after - cpu_before) * 1e6 / max(1, state["received"])


def measure_mosquitto(tls, options):
    broker = Mosquitto(options.messages, tls)
    try:
        pid = broker.process.pid
        fanout_received, fanout_rate, fanout_cpu = mosquitto_fanout(broker.endpoint, pid, options)
        sent, received, p50, p99, e2e_cpu = mosquitto_latency(broker.endpoint, pid, options)
        drain_received, drain_seconds, drain_cpu = mosquitto_drain(broker.endpoint, pid, options)
    finally:
        broker.stop()
    return {
        "fanout_per_second": fanout_rate, "fanout_received": fanout_received, "fanout_cpu_us": fanout_cpu,
        "p50_us": p50, "p99_us": p99, "e2e_received": received, "e2e_sent": sent, "e2e_cpu_us": e2e_cpu,
        "drain_seconds": drain_seconds, "drain_received": drain_received, "drain_cpu_us": drain_cpu,
    }


# ---------------------------------------------------------------- report


def version(command):
    try:
        return subprocess.run(command, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


def ratio(herald_value, mosquitto_value, herald_over_mosquitto):
    """Herald's figure over Mosquitto's, or the inverse; None when either is 0 (a run too
    short for the CPU clock's ticks reads 0)."""
    if not herald_value or not mosquitto_value:
        return None
    return herald_value / mosquitto_value if herald_over_mosquitto else mosquitto_value / herald_value


def shown(value, style):
    """A figure as the tables print it: µs as ms, seconds as ms, or a format string."""
    if style == "ms":
        return f"{value / 1000:.2f}"
    if style == "s":
        return f"{value * 1000:.1f}"
    return style.format(value)


def shown_ratio(value, unit="×"):
    return "—" if value is None else f"{value:.2f}{unit}"


def table(options, herald, mosquitto):
    """herald and mosquitto map "plaintext" and "tls" to one run's figures."""
    rows = [
        (f"(a) fanout to {options.subscribers:,} connected subscribers, deliveries/s (higher is better)",
         "fanout_per_second", True, "{:,.0f}"),
        ("(a) fanout: server CPU µs per delivery (lower is better)", "fanout_cpu_us", False, "{:.1f}"),
        (f"(b) one-to-one p50 latency at {options.rate:,}/s over {options.devices} devices, ms", "p50_us", False,
         "ms"),
        ("(b) one-to-one p99 latency, ms", "p99_us", False, "ms"),
        ("(b) one-to-one: server CPU µs per message (lower is better)", "e2e_cpu_us", False, "{:.1f}"),
        (f"(c) drain {options.messages:,} stored messages on reconnect, ms (lower is better)", "drain_seconds",
         False, "s"),
    ]
    lines = [
        "| measure | Herald, plaintext | Mosquitto, plaintext | Herald vs Mosquitto | Herald, TLS | Mosquitto, TLS "
        "| Herald vs Mosquitto |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, key, higher, style in rows:
        cells = [label]
        for gateway in ("plaintext", "tls"):
            ours, theirs = herald[gateway][key], mosquitto[gateway][key]
            cells += [shown(ours, style), shown(theirs, style), shown_ratio(ratio(ours, theirs, higher))]
        lines.append("| " + " | ".join(cells) + " |")

    def counts(key):
        return " / ".join(f"{figures[gateway][key]:,}" for gateway in ("plaintext", "tls")
                          for figures in (herald, mosquitto))

    delivered = (
        f"Delivered: fanout {counts('fanout_received')} of {options.subscribers:,}; one-to-one "
        f"{counts('e2e_received')} of {herald['plaintext']['e2e_sent']:,}; drain {counts('drain_received')} of "
        f"{options.messages:,} (Herald plaintext / Mosquitto plaintext / Herald TLS / Mosquitto TLS). A ratio "
        "is Herald's figure over Mosquitto's where higher is better and Mosquitto's over Herald's where lower "
        "is better: above 1× Herald is ahead.")
    return "\n".join(lines) + "\n\n" + delivered


# The figures issue 46 sets targets on, as the runs' summary shows them: label, gateway,
# key, whether the ratio is Herald's over Mosquitto's, style, unit, and the ratio's unit.
# The fanout ratios are above 1 where Herald is ahead; the p99's is Herald's over Mosquitto's.
SUMMARY_COLUMNS = [
    ("plaintext fanout deliveries/s", "plaintext", "fanout_per_second", True, "{:,.0f}", "", "×"),
    ("plaintext CPU a delivery", "plaintext", "fanout_cpu_us", False, "{:.0f}", " µs", "×"),
    ("TLS fanout deliveries/s", "tls", "fanout_per_second", True, "{:,.0f}", "", "×"),
    ("TLS CPU a delivery", "tls", "fanout_cpu_us", False, "{:.0f}", " µs", "×"),
    ("one-to-one p99, plaintext", "plaintext", "p99_us", True, "ms", " ms", " times"),
    ("one-to-one p99, TLS", "tls", "p99_us", True, "ms", " ms", " times"),
]


def summary(runs):
    """The targets' ratios run by run and their medians: runs holds (time, herald,
    mosquitto) for each run."""
    lines = ["| run | " + " | ".join(column[0] for column in SUMMARY_COLUMNS) + " |",
             "|---" * (len(SUMMARY_COLUMNS) + 1) + "|"]
    ratios = []
    for number, (started, herald, mosquitto) in enumerate(runs, 1):
        row = []
        for _, gateway, key, herald_over_mosquitto, style, unit, _ in SUMMARY_COLUMNS:
            ours, theirs = herald[gateway][key], mosquitto[gateway][key]
            row.append((ours, theirs, ratio(ours, theirs, herald_over_mosquitto)))
        ratios.append([value for _, _, value in row])
        cells = [f"{shown(ours, column[4])} / {shown(theirs, column[4])}{column[5]} = {shown_ratio(value, column[6])}"
                 for (ours, theirs, value), column in zip(row, SUMMARY_COLUMNS)]
        lines.append(f"| {number} ({started}) | " + " | ".join(cells) + " |")
    medians = []
    for column, values in zip(SUMMARY_COLUMNS, zip(*ratios)):
        known = [value for value in values if value is not None]
        medians.append(f"**{shown_ratio(statistics.median(known), column[6])}**" if known else "—")
    lines.append("| median | " + " | ".join(medians) + " |")
    return ("Each run's Herald over Mosquitto, the same gateway on both sides, and the medians: in the "
            "fanout columns above 1× Herald is ahead; the p99 columns are Herald's p99 over Mosquitto's.\n\n"
            + "\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--herald", default=os.path.join(ROOT, ".build", "release", "herald"))
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=1_000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--devices", type=int, default=300)
    parser.add_argument("--messages", type=int, default=1_000)
    parser.add_argument("--payload", type=int, default=64)
    parser.add_argument("--runs", type=int, default=1,
                        help="repeat the whole comparison; with more than one, the ratios' medians follow")
    parser.add_argument("--write", action="store_true", help="replace the table in BENCHMARKS.md")
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    runs = []
    for number in range(1, options.runs + 1):
        started = datetime.datetime.now().strftime("%H:%M")
        print(f"=== run {number} of {options.runs}, {started}", flush=True)
        # Tens of thousands of closed connections are still being torn down by the kernel
        # after each system's run; the next one starts once that has settled.
        herald, mosquitto = {}, {}
        for gateway in ("plaintext", "tls"):
            print(f"== Mosquitto, {gateway}", flush=True)
            mosquitto[gateway] = measure_mosquitto(gateway == "tls", options)
            print(json.dumps(mosquitto[gateway]), flush=True)
            time.sleep(10)
            print(f"== Herald, {gateway}", flush=True)
            herald[gateway] = measure_herald(options.herald, gateway == "tls", options)
            print(json.dumps(herald[gateway]), flush=True)
            time.sleep(10)
        runs.append((started, herald, mosquitto))

    command = " ".join(["scripts/compare-mosquitto", *sys.argv[1:]])
    mosquitto_version = version(["dpkg-query", "-W", "-f=${Version}", "mosquitto"])
    last = f" (the last of {options.runs} runs, {runs[-1][0]})" if options.runs > 1 else ""
    section = (
        f"Measured {datetime.date.today().isoformat()} with `{command}`{last} on {platform.machine()}, "
        f"{os.cpu_count()} cores, Linux {platform.release()}; Mosquitto {mosquitto_version} (Debian), "
        f"paho-mqtt {paho.mqtt.__version__}, {options.payload}-byte payloads.\n\n"
        + table(options, runs[-1][1], runs[-1][2]))
    if options.runs > 1:
        section += "\n\n" + summary(runs)
    print()
    print(section)
    if options.write:
        path = os.path.join(ROOT, "BENCHMARKS.md")
        with open(path) as f:
            text = f.read()
        before, rest = text.split(BEGIN, 1)
        _, after = rest.split(END, 1)
        with open(path, "w") as f:
            f.write(before + BEGIN + "\n" + section + "\n" + END + after)


if __name__ == "__main__":
    main()
