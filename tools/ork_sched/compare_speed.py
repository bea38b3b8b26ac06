#!/usr/bin/env python3
"""ork_sched_bench's speed runs for two builds, side by side in one run (docs/sched.md section 5).

    compare_speed.py BASE_DIR NEW_DIR [--repeat 5] [--sizes 1000,10000,100000,1000000]

Each DIR holds ork_sched_bench and ork_sched (a build's tools/ork_sched). The two benches run
alternately, one repeat each per round, so both see the same machine load; the table gives
min / median / max over the rounds of schedule() wall ms, its CPU ms, and the ork_sched process
(parse, schedule, JSON report) on the stream written to a file and parse_stream alone on its text
(a bench that predates that column shows "-"), plus the median ratio new/base.
"""
import argparse
import json
import statistics
import subprocess
import sys


def run(directory, sizes):
    cmd = [f"{directory}/ork_sched_bench", "--no-quality", "--repeat", "1", "--sizes", sizes, "--json",
           "--process", f"{directory}/ork_sched"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {(r["stream"], r["ops"]): r for r in json.loads(out)["speed"]}


def ms(value):
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def spread(values):
    return f"{ms(min(values))} / {ms(statistics.median(values))} / {ms(max(values))}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--sizes", default="1000,10000,100000,1000000")
    a = p.parse_args()
    rounds = {"base": [], "new": []}
    for r in range(a.repeat):
        for name, directory in (("base", a.base), ("new", a.new)):
            rounds[name].append(run(directory, a.sizes))
            print(f"round {r + 1}/{a.repeat} {name} done", file=sys.stderr, flush=True)
    metrics = (("schedule ms", lambda x: x["schedule_ms"]), ("CPU ms", lambda x: x["schedule_cpu_ms_mean"]),
               ("process ms", lambda x: x.get("process_ms_spread", {}).get("median")),
               ("parse ms", lambda x: x.get("parse_ms_spread", {}).get("median")))
    print("| stream | ops | " + " | ".join(f"{m} base | {m} new" for m, _ in metrics) + " | schedule new/base |")
    print("|" + " --- |" * (3 + 2 * len(metrics)))
    for key in rounds["new"][0]:
        cells = [key[0], f"{key[1]:,}"]
        for _, get in metrics:
            for name in ("base", "new"):
                vals = [get(run_[key]) for run_ in rounds[name] if key in run_ and get(run_[key]) is not None]
                cells.append(spread(vals) if vals else "-")
        med = {n: statistics.median(x[key]["schedule_ms"] for x in rounds[n]) for n in rounds}
        cells.append(f"{med['new'] / med['base']:.2f}")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
