#!/usr/bin/env python3
"""ork_sched_bench's speed runs for two builds, side by side in one run (docs/sched.md section 5).

    compare_speed.py BASE_DIR NEW_DIR [--repeat 5] [--sizes 1000,10000,100000,1000000]
    compare_speed.py BASE_DIR NEW_DIR --process-only [--repeat 5] [--sizes ...]

Each DIR holds ork_sched_bench and ork_sched (a build's tools/ork_sched). The two benches run
alternately, one repeat each per round, so both see the same machine load; the table gives
min / median / max over the rounds of schedule() wall ms, its CPU ms, and the ork_sched process
(parse, schedule, JSON report) on the stream written to a file, wall and CPU (user + system), and
parse_stream alone on its text (a bench that predates a column shows "-"), plus the median ratio
new/base of schedule() and of the process's CPU.

--process-only times the two ork_sched binaries alone, alternately, on the decode and random
streams NEW's ork_sched_bench writes (--write-streams, into a temporary folder): CPU ms (user +
system of the process, from wait4's rusage), min / median / max, the CPU per op in us, and the
median ratio new/base. This needs nothing of BASE but its ork_sched, so any older build serves.
"""
import argparse
import json
import os
import tempfile
import statistics
import subprocess
import sys


def run(directory, sizes):
    cmd = [f"{directory}/ork_sched_bench", "--no-quality", "--repeat", "1", "--sizes", sizes, "--json",
           "--process", f"{directory}/ork_sched"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {(r["stream"], r["ops"]): r for r in json.loads(out)["speed"]}


def process_cpu_ms(ork_sched, path):
    """One `ork_sched PATH --json` to /dev/null: its CPU ms (user + system), children included."""
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen([ork_sched, path, "--json"], stdout=null)
        _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"{ork_sched} {path}: exit status {status}")
    return 1000.0 * (usage.ru_utime + usage.ru_stime)


def process_only(a):
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([f"{a.new}/ork_sched_bench", "--write-streams", folder, "--sizes", a.sizes], check=True)
        streams = [(kind, int(n)) for kind in ("decode", "random") for n in a.sizes.split(",")]
        cpu = {(name, key): [] for name in ("base", "new") for key in streams}
        for r in range(a.repeat):
            for key in streams:
                path = f"{folder}/{key[0]}_{key[1]}.stream"
                for name, directory in (("base", a.base), ("new", a.new)):
                    cpu[(name, key)].append(process_cpu_ms(f"{directory}/ork_sched", path))
            print(f"round {r + 1}/{a.repeat} done", file=sys.stderr, flush=True)
        print("| stream | ops (size) | process CPU ms base | process CPU ms new | us/op base | us/op new "
              "| new/base |")
        print("|" + " --- |" * 7)
        for key in streams:
            with open(f"{folder}/{key[0]}_{key[1]}.stream") as f:
                ops = sum(1 for line in f if line and not line.startswith(("buffer", "memory", "cores", "#")))
            med = {n: statistics.median(cpu[(n, key)]) for n in ("base", "new")}
            print(f"| {key[0]} | {ops:,} ({key[1]:,}) | {spread(cpu[('base', key)])} | {spread(cpu[('new', key)])} "
                  f"| {1000 * med['base'] / ops:.2f} | {1000 * med['new'] / ops:.2f} | {med['new'] / med['base']:.2f} |")


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
    p.add_argument("--process-only", action="store_true", help="time the two ork_sched processes alone (CPU)")
    a = p.parse_args()
    if a.process_only:
        process_only(a)
        return
    rounds = {"base": [], "new": []}
    for r in range(a.repeat):
        for name, directory in (("base", a.base), ("new", a.new)):
            rounds[name].append(run(directory, a.sizes))
            print(f"round {r + 1}/{a.repeat} {name} done", file=sys.stderr, flush=True)
    metrics = (("schedule ms", lambda x: x["schedule_ms"]), ("CPU ms", lambda x: x["schedule_cpu_ms_mean"]),
               ("process ms", lambda x: x.get("process_ms_spread", {}).get("median")),
               ("process CPU ms", lambda x: x.get("process_cpu_ms_spread", {}).get("median")),
               ("parse ms", lambda x: x.get("parse_ms_spread", {}).get("median")))
    print("| stream | ops | " + " | ".join(f"{m} base | {m} new" for m, _ in metrics) + " | schedule new/base | process CPU new/base |")
    print("|" + " --- |" * (4 + 2 * len(metrics)))
    get_cpu = metrics[3][1]
    for key in rounds["new"][0]:
        cells = [key[0], f"{key[1]:,}"]
        for _, get in metrics:
            for name in ("base", "new"):
                vals = [get(run_[key]) for run_ in rounds[name] if key in run_ and get(run_[key]) is not None]
                cells.append(spread(vals) if vals else "-")
        med = {n: statistics.median(x[key]["schedule_ms"] for x in rounds[n]) for n in rounds}
        cells.append(f"{med['new'] / med['base']:.2f}")
        cpu = {n: [get_cpu(x[key]) for x in rounds[n] if key in x and get_cpu(x[key]) is not None] for n in rounds}
        cells.append(f"{statistics.median(cpu['new']) / statistics.median(cpu['base']):.2f}"
                     if cpu["new"] and cpu["base"] else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
