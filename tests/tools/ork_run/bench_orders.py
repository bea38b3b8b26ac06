#!/usr/bin/env python3
"""The three orders at board speed in one run (docs/execution.md "Measurements"): packs the
`small` shapes at 8 layers (22.5 MB) and runs ork_run --bench-orders at decode (M = 1, 3
cores) with I/O and modelled device time balanced: the reads go through the page cache
(ORK_IO_NO_DIRECT=1, the file read once first) capped at 2.8 GB/s, because this machine's
disk (~0.3 GB/s when shared) is 30x slower than the modelled NPU consumes weights; at 2.8
GB/s the reads and this run's device time balance (I/O / device 1.03-1.06 measured). Prints
ork_run's report; its exit code is the benchmark's (1 when a target is missed)."""
import atexit
import os
import subprocess
import sys
import shutil
import tempfile

ork_pack, ork_run = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="ork_bench_orders_")
atexit.register(shutil.rmtree, tmp, True)  # the scratch directory goes with the run
model = os.path.join(tmp, "small8.ork")
subprocess.run([ork_pack, "--synthetic", "small", "--layers", "8", "-o", model], check=True)
with open(model, "rb") as f:  # into the page cache
    while f.read(1 << 24):
        pass
args = [ork_run, model, "--bench-orders", "--tokens", "3", "--m", "1", "--budget", "8M", "--io-rate", "2.8e9",
        "--repeat", os.environ.get("ORK_BENCH_REPEAT", "21"), "--device", "emu"]
if "--json" in sys.argv[3:]:
    args.append("--json")
print("ORK_IO_NO_DIRECT=1 " + " ".join(args), flush=True)
rc = subprocess.run(args, env=dict(os.environ, ORK_IO_NO_DIRECT="1")).returncode
os.remove(model)
os.rmdir(tmp)
sys.exit(rc)
