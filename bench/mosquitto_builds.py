"""Two Herald builds beside Mosquitto: RUNS runs of compare_mosquitto.py for each build,
alternating which goes first, then for each build and gateway the range of Herald's figures
and the median of the runs' own ratios to Mosquitto (one-to-one CPU as Herald's over
Mosquitto's; fanout rate as Herald's over Mosquitto's; fanout CPU as Mosquitto's over
Herald's, so that above 1x Herald is ahead).

Usage: python bench/mosquitto_builds.py BASE_BINARY THIS_BINARY [RUNS]"""
import json
import os
import statistics
import subprocess
import sys

COMPARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_mosquitto.py")


def one_run(binary):
    """Each gateway's {"herald": figures, "mosquitto": figures} from one comparison run."""
    output = subprocess.run([sys.executable, COMPARE, "--herald", binary], check=True, capture_output=True,
                            text=True).stdout
    figures, system = {"plaintext": {}, "tls": {}}, None
    for line in output.splitlines():
        if line.startswith("== "):
            name, gateway = line[3:].split(", ")
            system = (name.lower(), gateway)
        elif line.startswith("{") and system:
            figures[system[1]][system[0]] = json.loads(line)
    return figures


def main():
    base, this = sys.argv[1:3]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    results = {"base": [], "this": []}
    for run in range(1, runs + 1):
        order = [("this", this), ("base", base)] if run % 2 else [("base", base), ("this", this)]
        for label, binary in order:
            figures = one_run(binary)
            results[label].append(figures)
            print(f"run {run} {label}: {json.dumps(figures)}", flush=True)
    measures = {
        "one-to-one CPU a message, times Mosquitto's": ("e2e_cpu_us", lambda h, m: h / m),
        "fanout deliveries/s, x Mosquitto's": ("fanout_per_second", lambda h, m: h / m),
        "fanout CPU a delivery, x (Mosquitto's over Herald's)": ("fanout_cpu_us", lambda h, m: m / h),
        "one-to-one p99, times Mosquitto's": ("p99_us", lambda h, m: h / m),
    }
    for label in ("this", "base"):
        for gateway in ("plaintext", "tls"):
            print(f"{label} build, {gateway}:")
            for name, (key, ratio) in measures.items():
                pairs = [(r[gateway]["herald"][key], r[gateway]["mosquitto"][key]) for r in results[label]]
                print(f"  {name}: median {statistics.median(ratio(h, m) for h, m in pairs):.2f}; "
                      f"Herald {min(h for h, _ in pairs):.0f}-{max(h for h, _ in pairs):.0f}, "
                      f"Mosquitto {min(m for _, m in pairs):.0f}-{max(m for _, m in pairs):.0f}")


if __name__ == "__main__":
    main()
