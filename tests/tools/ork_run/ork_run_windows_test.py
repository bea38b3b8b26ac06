#!/usr/bin/env python3
"""ork_run over several NPU windows (docs/execution.md "Windows"): a model larger than one
window runs fully resident, its layers spread over windows (rknpu IOMMU domains, rocket open
files), every output checked against the CPU reference. The emulated window is shrunk to
1 MiB (ORK_EMU_WINDOW) and the slots' share of it (--window) to three layers, so a 12-layer
tiny model needs four windows; the kernel's allocator and refusals are those of 4 GiB.

Usage: ork_run_windows_test.py ORK_PACK ORK_RUN"""
import atexit
import json
import os
import re
import subprocess
import sys
import shutil
import tempfile

ork_pack, ork_run = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="ork_run_windows_test_")
atexit.register(shutil.rmtree, tmp, True)  # the scratch directory goes with the run
failures = []
EMU = {"ORK_EMU_WINDOW": "1M"}


def run(args, want_rc, want_text=None, env=None):
    p = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "ORK_DEVICE": "emu", **(env or {})})
    ok_rc = p.returncode == want_rc if want_rc >= 0 else p.returncode != 0
    if not ok_rc or (want_text and want_text not in p.stderr + p.stdout):
        failures.append(f"{' '.join(args)} {env or ''}: rc {p.returncode} (want {want_rc}), wanted {want_text!r}; "
                        f"stdout: {p.stdout.strip()[-300:]}; stderr: {p.stderr.strip()}")
    return p


def check(cond, what):
    if not cond:
        failures.append(what)


model = os.path.join(tmp, "tiny.ork")
run([ork_pack, "--synthetic", "tiny", "--layers", "12", "-o", model], 0)
msg = run([ork_run, model, "--budget", "16K"], 2).stderr  # names the largest layer and its bytes
layer = int(re.search(r", (\d+) bytes\)", msg).group(1)) if re.search(r", (\d+) bytes\)", msg) else 0
window = str(3 * layer)
resident = [model, "--tokens", "2", "--budget", "4M", "--window", window, "--json"]

# Found: four windows of three layers, every tensor pinned, every output checked; on both
# kernel interfaces (rknpu: domains 0-3 of one node; rocket: four open files).
for dev in ("emu-rknpu", "emu-rocket"):
    p = run([ork_run, *resident, "--device", dev], 0, env=EMU)
    if p.returncode == 0:
        j = json.loads(p.stdout)
        check(j["windows"] == 4 and j["checked"] is True and j["pinned_tensors"] == 12 * 7
              and j["device"] == dev and j["peak_bytes"] <= 4 * 3 * layer, f"{dev} over 4 windows: {j}")
        # The board plan's groups ran in every window (q/k/v as one chained job of its window).
        check(j["max_group"] == 3, f"{dev} over 4 windows: max_group {j['max_group']}, q/k/v as one job expected")
# Given: the same; fewer than the layers need is refused, naming both counts.
p = run([ork_run, *resident, "--windows", "4"], 0, env=EMU)
check(p.returncode != 0 or json.loads(p.stdout)["windows"] == 4, f"--windows 4: {p.stdout}")
run([ork_run, *resident, "--windows", "2"], 2, "the model's layers need 4 NPU windows", env=EMU)
# One window (the model streams through it) is still checked, with fewer tensors pinned.
p = run([ork_run, *resident, "--windows", "1"], 0, env=EMU)
if p.returncode == 0:
    j = json.loads(p.stdout)
    check(j["windows"] == 1 and j["checked"] is True and j["pinned_tensors"] < 12 * 7, f"--windows 1: {j}")
# Several windows need the model resident: one token reads every tensor once, so it is refused.
run([ork_run, model, "--tokens", "1", "--budget", "4M", "--window", window, "--windows", "4"], 2,
    "4 NPU windows hold a model only while it stays resident", env=EMU)
# The kernel's window is enforced: 24 layers' slots (1.2 MiB) past the emulated 1 MiB fail
# naming the window; the 12 layers' slots fit, and the contexts of their matmuls then do not.
big = os.path.join(tmp, "tiny24.ork")
run([ork_pack, "--synthetic", "tiny", "--layers", "24", "-o", big], 0)
run([ork_run, big, "--tokens", "2", "--budget", "4M", "--window", "2M"], 1,
    "weight slot in NPU window 0: RKNPU_MEM_CREATE", env=EMU)
run([ork_run, model, "--tokens", "2", "--budget", "4M", "--window", "2M"], 1, "in NPU window 0 failed: ENOMEM", env=EMU)
run([ork_run, model, "--tokens", "2"], -1, "ORK_EMU_WINDOW=12Q", env={"ORK_EMU_WINDOW": "12Q"})

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
