#!/usr/bin/env python3
"""Pool the neighbour's latencies of several `scripts/bench-quota` runs.

Each argument is a samples file written by `SAMPLES=FILE scripts/bench-quota …`: one JSON
object a line, {"overloaded": bool, "latency_ns": [...]}, one line per slice. Prints the
neighbour's p50, p90 and p99 beside the project at its quota and beside the overload, and
the p99 change with two 90% intervals:

- over slices: each kind's slices of all runs drawn again with replacement (the interval
  `herald bench quota` prints for one run, applied to the pool);
- over runs: whole runs drawn first, then the slices of each drawn run, so that a run whose
  machine was slower or faster throughout counts as one draw.

It also prints each run's own change and their median, with a 90% interval from drawing
whole runs again: a run the machine disturbed moves the median less than the pool.

Both use 400 draws from a fixed seed, and take the 5th and 95th percentiles.
"""

import heapq
import itertools
import json
import random
import sys

DRAWS = 400


def interpolate(at, count, p):
    """The `p` percentile of `count` values, `at(i)` being the i-th in ascending order:
    linear between the two ranks around (count - 1) * p."""
    k = (count - 1) * p
    low = int(k)
    high = min(low + 1, count - 1)
    return at(low) + (at(high) - at(low)) * (k - low)


def percentile(values, p):
    values = sorted(values)
    return interpolate(values.__getitem__, len(values), p)


def p99(slices):
    """`percentile(…, 0.99)` of the slices' latencies together, found among only the
    largest of them: the draws below pool hundreds of slices 400 times each, and a copy
    and sort of every latency at each draw made pooling a few dozen runs take minutes."""
    count = sum(len(s) for s in slices)
    low = int((count - 1) * 0.99)
    # Largest first, from rank `low` up: rank i in ascending order is top[count - 1 - i].
    top = heapq.nlargest(count - low, itertools.chain.from_iterable(slices))
    return interpolate(lambda i: top[count - 1 - i], count, 0.99)


def p99_change(quota_slices, overload_slices):
    return p99(overload_slices) / p99(quota_slices) - 1


def interval(changes):
    changes = sorted(changes)
    return changes[int(DRAWS * 0.05)], changes[int(DRAWS * 0.95) - 1]


def read_run(path):
    run = {True: [], False: []}
    with open(path) as f:
        for line in f:
            sample = json.loads(line)
            run[sample["overloaded"]].append(sample["latency_ns"])
    return run


def main(paths):
    if not paths:
        sys.exit("usage: pool-quota.py SAMPLES.jsonl …")
    runs = [read_run(p) for p in paths]
    quota = [s for r in runs for s in r[False]]
    overload = [s for r in runs for s in r[True]]
    flat_quota = [x for s in quota for x in s]
    flat_overload = [x for s in overload for x in s]
    for p in (0.5, 0.9, 0.99):
        q, o = percentile(flat_quota, p), percentile(flat_overload, p)
        print(f"p{round(p * 100)}: {q / 1000:.0f} / {o / 1000:.0f} µs ({(o / q - 1) * 100:+.1f}%)")

    rng = random.Random(1)
    by_slice = [
        p99_change([rng.choice(quota) for _ in quota], [rng.choice(overload) for _ in overload])
        for _ in range(DRAWS)
    ]
    rng = random.Random(1)
    by_run = []
    for _ in range(DRAWS):
        drawn = [rng.choice(runs) for _ in runs]
        q = [rng.choice(r[False]) for r in drawn for _ in r[False]]
        o = [rng.choice(r[True]) for r in drawn for _ in r[True]]
        by_run.append(p99_change(q, o))

    change = p99_change(quota, overload) * 100
    low, high = (x * 100 for x in interval(by_slice))
    print(f"{len(runs)} runs, {len(quota)} / {len(overload)} slices: p99 change {change:+.1f}%")
    print(f"  90% interval over slices {low:+.1f}% to {high:+.1f}%")
    low, high = (x * 100 for x in interval(by_run))
    print(f"  90% interval over runs   {low:+.1f}% to {high:+.1f}%")

    own = [p99_change(r[False], r[True]) for r in runs]
    rng = random.Random(1)
    medians = [percentile([rng.choice(own) for _ in own], 0.5) for _ in range(DRAWS)]
    low, high = (x * 100 for x in interval(medians))
    print("each run's own change: " + ", ".join(f"{x * 100:+.1f}%" for x in own))
    print(f"  median {percentile(own, 0.5) * 100:+.1f}% (90% interval over runs {low:+.1f}% to {high:+.1f}%)")


if __name__ == "__main__":
    main(sys.argv[1:])
