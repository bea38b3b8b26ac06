#!/usr/bin/env python3
"""ork_run's plan file, memory flags and reports end to end: --plan-out writes the plan in
ork_sched's text format, which ork_sched reads and draws (--svg, --trace), choosing with the
executor's own chooser the order run at exactly the plan's predicted time and lower bound; --plan-only stops there
with no device; --window refuses a window below the largest layer, naming it, and bounds
the slots; --budget defaults from the machine; peak_rss_bytes and the device as opened are
reported; bad outputs and models that are no packed files are named before anything runs.

Usage: ork_run_plan_test.py ORK_PACK ORK_RUN ORK_SCHED"""
import atexit
import json
import os
import re
import subprocess
import sys
import shutil
import tempfile

ork_pack, ork_run, ork_sched = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp(prefix="ork_run_plan_test_")
atexit.register(shutil.rmtree, tmp, True)  # the scratch directory goes with the run
failures = []


def run(args, want_rc, want_text=None, env=None):
    p = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "ORK_DEVICE": "emu", **(env or {})})
    if p.returncode != want_rc or (want_text and want_text not in p.stderr + p.stdout):
        failures.append(f"{' '.join(args)}: rc {p.returncode} (want {want_rc}), "
                        f"wanted {want_text!r}; stdout: {p.stdout.strip()[-300:]}; stderr: {p.stderr.strip()}")
    return p


def check(cond, what):
    if not cond:
        failures.append(what)


model = os.path.join(tmp, "tiny.ork")
run([ork_pack, "--synthetic", "tiny", "--layers", "4", "-o", model], 0)
common = [model, "--tokens", "3", "--budget", "96K"]

# The plan written beside a run, and the same plan alone: the same bytes.
plan = os.path.join(tmp, "plan.stream")
p = run([ork_run, *common, "--plan-out", plan, "--json"], 0)
j = json.loads(p.stdout) if p.returncode == 0 else {}
alone = os.path.join(tmp, "alone.stream")
run([ork_run, *common, "--plan-out", alone, "--plan-only"], 0, "ork_sched " + alone, env={"ORK_DEVICE": "nosuch"})
check(os.path.exists(plan) and open(plan).read() == open(alone).read(), "--plan-only wrote another plan than the run")
# --plan-only runs again on huge pages (tools/common/huge_pages.h), as ork_sched does; a run
# without that second run (ORK_NO_HUGE_PAGES) writes the same bytes.
plain = os.path.join(tmp, "plain.stream")
run([ork_run, *common, "--plan-out", plain, "--plan-only"], 0, env={"ORK_DEVICE": "nosuch", "ORK_NO_HUGE_PAGES": "1"})
check(os.path.exists(plain) and open(plain).read() == open(alone).read(), "--plan-only's second run wrote another plan")

# ork_sched reads it, makes the order run at the plan's predicted time (its makespan), with
# the same lower bound, and draws both pictures.
svg, trace = os.path.join(tmp, "plan.svg"), os.path.join(tmp, "plan.json")
s = run([ork_sched, plan, "--json", "--svg", svg, "--trace", trace], 0)
if s.returncode == 0 and j:
    sj = json.loads(s.stdout)
    head = re.search(r"# predicted_ns (\d+) lower_bound_ns (\d+) ", open(plan).read())
    check(head is not None, "the plan file lacks its predicted_ns line")
    predicted_ns, lower_ns = (int(head.group(1)), int(head.group(2))) if head else (-1, -1)
    check(sj["makespan"] == predicted_ns, f"ork_sched's order takes {sj['makespan']}, the plan said {predicted_ns}")
    check(sj["policy"] == j["policy"], f"ork_sched chose with {sj['policy']}, ork_run with {j['policy']}")
    check(sj["lower_bound"] == lower_ns, f"ork_sched's lower bound {sj['lower_bound']}, the plan's {lower_ns}")
    check(round(j["predicted_us"] * 1000) == predicted_ns and round(j["lower_bound_us"] * 1000) == lower_ns,
          f"ork_run --json predicted {j['predicted_us']} us, lower bound {j['lower_bound_us']} us; the plan file {head.groups()}")
    ops = [" ".join(ln.split()[:2]) for ln in open(plan) if ln.split()[:1] in (["load"], ["start"], ["wait"])]
    # 3 tokens x 28 tensors: a start and a wait each, a load each but a pinned tensor's one.
    check(len(ops) == 3 * 28 * 2 + 28 + 2 * (28 - j["pinned_tensors"]), f"{len(ops)} ops in the plan file: {j}")
    check(sorted(sj["order"]) == sorted(ops), "ork_sched's order is not a permutation of the file's ops")
    check(open(svg).read().startswith("<svg") and "traceEvents" in json.load(open(trace)), "the pictures were not drawn")
run([ork_run, *common, "--plan-only"], 2, "--plan-out")
run([ork_run, *common, "--plan-out", os.path.join(tmp, "no", "p.stream")], 2, "cannot create a file in its directory: ENOENT (No such file or directory)")
run([ork_run, *common, "--plan-out", model], 2, "refusing to overwrite an input")

# --window: below the largest layer refused naming it (as the budget's message does).
msg = run([ork_run, model, "--budget", "16K"], 2).stderr
layer = msg[msg.find(" (layer "):].rstrip()
run([ork_run, model, "--budget", "1M", "--window", "16K"], 2, "NPU window 16384 bytes is smaller than the largest layer" + layer)
run([ork_run, model, "--window", "5G"], 2, "--window 5G: above the NPU's 4 GiB address window")
run([ork_run, model, "--window", "lots"], 2, "--window lots")
largest = int(re.search(r", (\d+) bytes\)", layer).group(1)) if ", " in layer else 0
p = run([ork_run, model, "--tokens", "2", "--budget", "1M", "--window", str(largest), "--windows", "1", "--json"], 0)
if p.returncode == 0:
    w = json.loads(p.stdout)
    check(w["window_bytes"] == largest and w["budget_bytes"] == 1 << 20 and w["peak_bytes"] <= largest
          and w["budget_source"] == "--budget" and w["checked"] is True and w["windows"] == 1, f"--window {largest}: {w}")
# --window is per window: with the windows found, the resident model takes one window a layer.
p = run([ork_run, model, "--tokens", "2", "--budget", "1M", "--window", str(largest), "--json"], 0)
if p.returncode == 0:
    w = json.loads(p.stdout)
    check(w["windows"] == 4 and w["peak_bytes"] <= 4 * largest and w["pinned_tensors"] == 4 * 7 and w["checked"] is True,
          f"--window {largest}, windows found: {w}")

# The default budget: half of MemAvailable in whole MiB (the exact rule: input_limits_test).
p = run([ork_run, model, "--tokens", "1", "--json"], 0)
if p.returncode == 0:
    d = json.loads(p.stdout)
    avail = int(re.search(r"MemAvailable:\s+(\d+) kB", open("/proc/meminfo").read()).group(1)) * 1024
    check(d["budget_source"] == "MemAvailable / 2" and d["budget_bytes"] % (1 << 20) == 0
          and 0.25 * avail < d["budget_bytes"] < 0.75 * avail, f"default budget {d['budget_bytes']} of {avail}")
    check(d["window_bytes"] == 1 << 32, f"default window {d['window_bytes']}")

# Measured memory and the device as opened.
if j:
    check(j["peak_bytes"] <= 96 << 10 and (1 << 20) < j["peak_rss_bytes"] < (8 << 30), f"peak_rss_bytes: {j}")
    check(j["device"] == "emu-rknpu", f"ORK_DEVICE=emu opened {j['device']}")
for dev in ("emu-rocket", "cpu"):
    p = run([ork_run, model, "--tokens", "1", "--budget", "96K", "--device", dev, "--json"], 0)
    check(p.returncode != 0 or json.loads(p.stdout)["device"] == dev, f"--device {dev}: {p.stdout}")

# Bad inputs named before the run: an unwritable --trace, a directory, a text file.
run([ork_run, *common, "--trace", os.path.join(tmp, "no", "t.json")], 2,
    "--trace " + os.path.join(tmp, "no", "t.json") + ": cannot create a file in its directory: ENOENT (No such file or directory)")
run([ork_run, tmp, "--budget", "96K"], 2, tmp + ": a directory, not a packed model file")
text = os.path.join(tmp, "passwd")
open(text, "w").write("root:x:0:0:root:/root:/bin/bash\n")
p = run([ork_run, text, "--budget", "96K"], 2, text + ": not a packed model file (bad magic; pack it with ork_pack)")
check("truncated" not in p.stderr, f"a text file reported as truncated: {p.stderr}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
