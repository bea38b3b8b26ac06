#!/usr/bin/env python3
"""How full a `meson test` run kept its process slots (docs/reliability.md "CI time", lever 51).

Usage: scripts/test_timeline.py TESTLOG_JSON [SLOTS] [TOP]

Reads a meson test log (BUILD_DIR/meson-logs/testlog.json: one JSON object per test with its
start time and duration, in seconds) and prints the run's wall time (first start to last end),
the summed test durations, the slot occupancy (summed durations / (SLOTS x wall); SLOTS is
meson test's --num-processes, 2 by default, the CI machine's cores), the seconds in which
fewer than SLOTS tests ran, then the TOP (default 10) longest tests and the last five to end,
each with its start and end in seconds from the run's start. An occupancy near 1 means the
step never waited on one long test at its tail: any core left idle then was idle inside the
tests (waiting, or sharing the machine), which only each test's CPU time shows.
"""
import json
import sys


def read_tests(path):
    """(name, start, end) per test, the name without its project and suite."""
    tests = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            tests.append((t["name"].split(" / ")[-1], t["starttime"], t["starttime"] + t["duration"]))
    return tests


def under_filled(tests, slots):
    """Seconds during which fewer than `slots` tests were running."""
    edges = sorted({s for _, s, _ in tests} | {e for _, _, e in tests})
    total = 0.0
    for a, b in zip(edges, edges[1:]):
        if sum(1 for _, s, e in tests if s <= a and e >= b) < slots:
            total += b - a
    return total


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    tests = read_tests(argv[1])
    slots = int(argv[2]) if len(argv) > 2 else 2
    top = int(argv[3]) if len(argv) > 3 else 10
    t0 = min(s for _, s, _ in tests)
    wall = max(e for _, _, e in tests) - t0
    busy = sum(e - s for _, s, e in tests)
    print(f"{len(tests)} tests, wall {wall:.0f} s, summed durations {busy:.0f} s, "
          f"occupancy {busy / (slots * wall):.2f} of {slots} slots, "
          f"{under_filled(tests, slots):.0f} s with fewer than {slots} tests running")
    for title, order in (("longest", lambda t: t[1] - t[2]), ("last to end", lambda t: -t[2])):
        print(title + ":")
        for name, s, e in sorted(tests, key=order)[:top if title == "longest" else 5]:
            print(f"  {name:40s} {e - s:7.1f} s  from {s - t0:7.1f} to {e - t0:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
