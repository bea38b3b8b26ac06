#!/usr/bin/env python3
"""ork_sched and ork_sched_bench from the outside: exit codes, JSON, pictures.
Usage: ork_sched_test.py ORK_SCHED ORK_SCHED_BENCH EXAMPLES_DIR"""
import json
import os
import subprocess
import sys
import tempfile

tool, bench, examples = sys.argv[1:4]
ex1 = os.path.join(examples, "example1.stream")
ex2 = os.path.join(examples, "example2.stream")
failures = []


def run(*args, stdin=None):
    p = subprocess.run(list(args), capture_output=True, text=True, input=stdin, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


code, out, _ = run(tool, "--help")
expect(code == 0 and "--cap-percent" in out, "--help exits 0 and lists the flags")
code, _, _ = run(tool)
expect(code == 2, "no FILE is bad usage (2)")
code, _, err = run(tool, "/nonexistent.stream")
expect(code == 2 and "cannot read" in err, "unreadable file is bad usage (2)")
code, _, err = run(tool, "/dev/zero")
expect(code == 2 and "is a character device, not a regular file" in err, "a device is refused (2)")
code, _, err = run(tool, examples)
expect(code == 2 and "is a directory" in err, "a directory is refused (2)")
code, _, err = run(tool, ex1, "--swap-bandwidth", "nan")
expect(code == 2 and "'nan' is not a finite number" in err, "--swap-bandwidth nan is refused (2): " + err)
code, _, err = run(tool, ex1, "--cores", "-1")
expect(code == 2 and "-1 is too small" in err, "--cores -1 is refused (2): " + err)
code, _, err = run(tool, ex1, "--svg", ex1)
expect(code == 2 and "refusing to overwrite an input" in err, "--svg FILE is refused (2): " + err)
code, _, _ = run(tool, ex1, "--policy", "bogus")
expect(code == 2, "unknown policy is bad usage (2)")
code, _, _ = run(tool, ex1, "--cap-percent", "0")
expect(code == 2, "cap percent 0 is bad usage (2)")

code, out, _ = run(tool, ex1, "--json")
report = json.loads(out) if code == 0 else {}
expect(code == 0, "example 1 runs")
expect(report.get("order") == ["load L1", "start P1", "load L2", "start P2", "load L3", "wait P1",
                               "start P3", "wait P2", "wait P3", "store S3"], "example 1 order")
expect(report.get("makespan_input") == 410 and report.get("makespan") == 250, "example 1 makespans")
expect(report.get("core", {}).get("P2") == 1 and report.get("pass") == 0, "example 1 core and pass")
for key in ["peak_bytes", "lower_bound", "cap_percent"]:
    expect(key in report, "JSON has " + key)

code, out, _ = run(tool, ex2, "--urgent-starts", "1", "--json")
report = json.loads(out) if code == 0 else {}
expect(report.get("makespan") == 550 and report.get("makespan_input") == 730, "example 2 makespans")
expect(report.get("order", [])[:6] == ["load L1", "start P1", "load L2", "wait P1", "start P2", "load L3"],
       "example 2: L3 waits for P2")

code, out, _ = run(tool, ex1, "--memory", "20K")
expect(code == 1, "memory too small for the input order fails the check (1)")

with tempfile.TemporaryDirectory() as tmp:
    bad = os.path.join(tmp, "bad.stream")
    with open(bad, "w") as f:
        f.write("memory 1K\nbuffer w 64\nload L writes=w\nwait P9\n")
    code, _, err = run(tool, bad)
    expect(code == 2 and "line 4: wait P9 without a start before it" in err, "stream errors name the line (2)")
    svg, trace = os.path.join(tmp, "o.svg"), os.path.join(tmp, "o.json")
    code, _, _ = run(tool, ex1, "--svg", svg, "--trace", trace)
    expect(code == 0, "pictures are written")
    with open(svg) as f:
        expect(f.read().startswith("<svg"), "SVG file")
    with open(trace) as f:
        expect(len(json.load(f)["traceEvents"]) > 10, "trace file")
    code, out, _ = run(tool, "-", "--json", stdin=open(ex1).read())
    expect(code == 0 and json.loads(out)["makespan"] == 250, "reads stdin")

code, out, err = run(bench, "--no-speed", "--random", "3", "--json", "--examples", examples)
expect(code == 0, "bench quality suite passes its checks: " + err)
if code == 0:
    b = json.loads(out)
    expect(b["failed_checks"] == 0 and b["geomean"]["all"]["cp/fifo"] <= 1.0, "bench geomeans")
    expect(any(c["name"] == "example1.stream" and c["fifo"] == 250 for c in b["cases"]), "bench runs example 1")
    h = b["heldout"]["geomean"]["all"]
    expect(b["heldout"]["streams"]["all"] > 10 and h["best"] <= h["critical-path"] <= h["fifo"] and h["best"] >= 1.0,
           "held-out geomeans: best <= critical-path <= fifo, none under the bound")

# --policy best: example 1 is at its bound already (250), and the committed rule is named.
code, out, _ = run(tool, ex1, "--json", "--policy", "best")
report = json.loads(out) if code == 0 else {}
expect(code == 0 and report.get("makespan") == 250 and report.get("lower_bound") == 250, "best reaches the bound")
expect(len(report.get("attempts", [])) >= 8 and "dma_lookahead" in report, "best tries eight rules and reports the one kept")

# The second run (tools/common/huge_pages.h: huge pages, no block mappings of malloc's own,
# no heap trim; the tunables it sets are checked in huge_pages_test.cpp) reports what a run with
# none of it does (ORK_NO_HUGE_PAGES).
env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "ORK_NO_HUGE_PAGES")}
second = subprocess.run([tool, ex2, "--json"], capture_output=True, text=True, env=env, timeout=120)
plain = subprocess.run([tool, ex2, "--json"], capture_output=True, text=True, env=dict(env, ORK_NO_HUGE_PAGES="1"),
                       timeout=120)
expect(second.returncode == 0 and second.stdout == plain.stdout and '"makespan"' in plain.stdout,
       "the second run's report is the plain run's")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
