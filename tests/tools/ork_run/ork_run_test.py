#!/usr/bin/env python3
"""ork_run and ork_pack end to end: a checked run (exit 0, the JSON keys), and each bad
input named with exit 2: a truncated model file, a missing tensor, a budget smaller than
the largest layer, shapes that do not chain, a bad order."""
import atexit
import json
import os
import struct
import subprocess
import sys
import shutil
import tempfile

ork_pack, ork_run = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="ork_run_test_")
atexit.register(shutil.rmtree, tmp, True)  # the scratch directory goes with the run
failures = []


def run(args, want_rc, want_text=None):
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, ORK_DEVICE="emu"))
    if p.returncode != want_rc or (want_text and want_text not in p.stderr + p.stdout):
        failures.append(f"{' '.join(args)}: rc {p.returncode} (want {want_rc}), "
                        f"wanted {want_text!r}; stderr: {p.stderr.strip()}")
    return p


model = os.path.join(tmp, "tiny.ork")
run([ork_pack, "--synthetic", "tiny", "--layers", "4", "-o", model], 0)
p = run([ork_run, model, "--tokens", "2", "--budget", "96K", "--json"], 0)
if p.returncode == 0:
    j = json.loads(p.stdout)
    for key in ["tokens", "token_us", "io_us", "device_us", "overlap", "hit_rate", "peak_bytes",
                "budget_bytes", "order", "checked"]:
        if key not in j:
            failures.append(f"--json lacks {key}")
    if j.get("checked") is not True or j.get("peak_bytes", 1 << 40) > 96 * 1024 or j.get("tokens") != 2:
        failures.append(f"unexpected JSON: {j}")
run([ork_run, model, "--tokens", "1", "--budget", "96K", "--order", "sequential"], 0, "checked")
# --inflight: the limit is in the JSON and never passed; 1 is one matmul at a time; bad values
# are bad usage.
for n in ("1", "3"):
    p = run([ork_run, model, "--tokens", "2", "--budget", "1M", "--inflight", n, "--json"], 0)
    if p.returncode == 0:
        j = json.loads(p.stdout)
        if j.get("inflight") != int(n) or not 1 <= j.get("max_inflight", 0) <= int(n) or j.get("checked") is not True:
            failures.append(f"--inflight {n}: {j}")
        if n == "1" and j.get("max_inflight") != 1:
            failures.append(f"--inflight 1 had {j.get('max_inflight')} matmuls in flight")
        # The board plan: with room for the model, q, k and v go to the NPU as one chained job.
        if j.get("max_group") != (0 if n == "1" else 3):
            failures.append(f"--inflight {n}: max_group {j.get('max_group')}, the q/k/v group expected as one job")
        # Decode (one row) never splits a group into row pieces; --inflight 1 runs no group.
        if j.get("max_pieces") != (0 if n == "1" else 1):
            failures.append(f"--inflight {n}: max_pieces {j.get('max_pieces')}, one piece a group expected at M = 1")
for bad in ("0", "9", "two"):
    run([ork_run, model, "--inflight", bad], 2, "--inflight")
# Fusion is the default (--fuse accepted, the same); --no-fuse runs every group unfused. Each
# run is checked against the CPU reference bit for bit ("checked").
for flags, want in (([], True), (["--fuse"], True), (["--no-fuse"], False)):
    p = run([ork_run, model, "--tokens", "2", "--budget", "1M", "--json"] + flags, 0)
    if p.returncode == 0:
        j = json.loads(p.stdout)
        if j.get("fuse") is not want or j.get("checked") is not True or (not want and j.get("fused_groups") != 0):
            failures.append(f"{flags or 'default'}: fuse {j.get('fuse')}, fused_groups {j.get('fused_groups')}, "
                            f"checked {j.get('checked')}")

data = open(model, "rb").read()
trunc = os.path.join(tmp, "trunc.ork")
open(trunc, "wb").write(data[:-4096])
run([ork_run, trunc, "--budget", "96K"], 2, "truncated")
run([ork_run, model, "--budget", "16K"], 2, "smaller than the largest layer")
run([ork_run, model, "--order", "random"], 2, "--order random")
run([ork_run, os.path.join(tmp, "nothere.ork")], 2, "nothere.ork")


def rewrite(path, edit):
    """The packed file with its description edited and both checksums fixed."""
    b = bytearray(data)
    n = struct.unpack_from("<Q", b, 24)[0]
    d = json.loads(b[4096:4096 + n])
    edit(d)
    text = json.dumps(d).encode()
    data_offset = struct.unpack_from("<Q", b, 32)[0]
    b[4096:data_offset] = bytes(data_offset - 4096)
    b[4096:4096 + len(text)] = text

    def fnv(x):
        h = 14695981039346656037  # FNV-1a 64-bit basis
        for c in x:
            h = ((h ^ c) * 1099511628211) & (2**64 - 1)
        return h
    struct.pack_into("<Q", b, 24, len(text))
    struct.pack_into("<Q", b, 48, fnv(text))
    struct.pack_into("<Q", b, 56, fnv(bytes(b[:56])))
    open(path, "wb").write(b)


missing = os.path.join(tmp, "missing.ork")
rewrite(missing, lambda d: d["tensors"].pop(10))
run([ork_run, missing, "--budget", "96K"], 2, "is missing")
chain = os.path.join(tmp, "chain.ork")
rewrite(chain, lambda d: d["model"]["matmuls"][6].update(k=96))
run([ork_run, chain, "--budget", "96K"], 2, "do not chain")

desc = os.path.join(tmp, "bad.json")
open(desc, "w").write('{"dtype": "int8", "hidden": 64, "layers": 1, "matmuls": [], "output": ["x"]}')
run([ork_pack, os.path.join(tmp, "none.safetensors"), "--desc", desc, "-o", os.path.join(tmp, "x.ork")], 2, "no matmuls")
run([ork_pack, "--synthetic", "huge", "-o", os.path.join(tmp, "x.ork")], 2, "unknown synthetic model")

# --project: the board projection, from a packed file and from a synthetic shape.
for args in ([ork_run, model, "--project", "--json"],
             [ork_run, "--project", "--synthetic", "tiny", "--layers", "3", "--json", "--host-us", "5"]):
    p = run(args, 0)
    if p.returncode == 0:
        j = json.loads(p.stdout)
        for key in ["weight_bytes", "resident", "streamed_bytes", "budget_bytes", "window_bytes", "disk_rate",
                    "residency_rule", "host_source", "device_source"]:
            if key not in j:
                failures.append(f"--project --json lacks {key}")
        for step in ["decode", "prefill_m128", "prefill_m512"]:
            s = j.get("project", {}).get(step, {})
            for key in ["tokens_per_s", "step_us", "device_us", "host_us", "io_us", "compute_us", "sequential_us",
                        "submits", "tasks", "tasks_per_layer", "windows", "dram_floor_us", "plan", "groups",
                        "per_matmul", "per_submit", "split_each", "split", "m", "window_switches", "switch_us",
                        "host_exposed_us", "host_overlapped_us"]:
                if key not in s:
                    failures.append(f"--project {step} lacks {key}")
            # Only the host time the NPU's jobs do not hide is added (docs/execution.md "Host and
            # device overlapped"): exposed + overlapped = host, exposed within [0, host].
            if s and abs(s["step_us"] - max(s["io_us"], s["device_us"] + s["host_exposed_us"] + s["switch_us"])) > 1e-6 * s["step_us"]:
                failures.append(f"--project {step}: step_us is not max(io, device + exposed host + window switches): {s}")
            if s and (abs(s["host_exposed_us"] + s["host_overlapped_us"] - s["host_us"]) > 1e-6 * max(s["host_us"], 1)
                      or s["host_exposed_us"] < -1e-6 or s["host_overlapped_us"] < -1e-6):
                failures.append(f"--project {step}: host_exposed_us + host_overlapped_us is not host_us: {s}")
            if s and abs(s["tokens_per_s"] - s["m"] * 1e6 / s["step_us"]) > 1e-6 * s["tokens_per_s"]:
                failures.append(f"--project {step}: tokens_per_s is not m / step: {s}")
            if s and s.get("tasks") != s.get("tasks_per_layer", 0) * j["layers"]:
                failures.append(f"--project {step}: tasks is not tasks_per_layer x layers: {s}")
            if s and s.get("windows") != 1:
                failures.append(f"--project {step}: windows {s.get('windows')}, one NPU window expected")
        if "--host-us" in args and j.get("project", {}).get("decode", {}).get("host_us") != 5 * 3 * 7:
            failures.append(f"--host-us 5 over 3 layers x 7 matmuls: {j.get('project', {}).get('decode')}")
# The projection prices the plan the executor runs: fused by default (Qwen2.5-1.5B int8
# decode 12 tasks a layer, q/k/v and gate/up fused, down in three K-slices of at most 3072),
# 16 with --no-fuse and none fused.
for flags, want_tasks, want_fuse in (([], 12, True), (["--no-fuse"], 16, False)):
    p = run([ork_run, "--project", "--synthetic", "qwen2.5-1.5b", "--layers", "2", "--json", "--host-us", "5"] + flags, 0)
    if p.returncode == 0:
        j = json.loads(p.stdout)
        d = j["project"]["decode"]
        fused = [g["matmuls"] for g in d["groups"] if g["fused"]]
        if (j.get("fuse") is not want_fuse or d["tasks_per_layer"] != want_tasks or "fused" in d
                or len(fused) != (2 if want_fuse else 0)):
            failures.append(f"--project {flags or 'default'}: fuse {j.get('fuse')}, tasks_per_layer "
                            f"{d['tasks_per_layer']}, fused groups {fused}, keys {sorted(d)}")
# 7B at int8 is past one 4 GiB window: held in 14 GiB of RAM over two windows, nothing read
# per token; without the budget (one window's worth of RAM) it streams.
p = run([ork_run, "--project", "--synthetic", "7b", "--layers", "28", "--dtype", "int8", "--budget", "14G", "--json",
         "--host-us", "5"], 0)
if p.returncode == 0:
    j = json.loads(p.stdout)
    d = j["project"]["decode"]
    if not (j["resident"] is True and j["windows"] == 2 and d["windows"] == 2 and d["io_us"] == 0
            and d["window_switches"] == 2 and d["tokens_per_s"] > 3):
        failures.append(f"7b int8 --budget 14G: resident {j['resident']}, windows {j['windows']}, decode {d}")
p = run([ork_run, "--project", "--synthetic", "7b", "--layers", "28", "--dtype", "int8", "--json", "--host-us", "5"], 0)
if p.returncode == 0 and (json.loads(p.stdout)["resident"] or json.loads(p.stdout)["windows"] != 1):
    failures.append(f"7b int8 in one window's budget: {p.stdout[:300]}")
# int4: each matmul sliced as wide as its weights' own int16 bound allows (docs/dtypes.md
# "int4 slices from the weights"): the synthetic model's weights and Q4_0-shaped ones give
# fewer decode tasks than the 480 floor, and report their widths.
tasks = {}
for kind in ("floor", "synthetic", "q4_0"):
    p = run([ork_run, "--project", "--synthetic", "small", "--layers", "2", "--dtype", "int4", "--int4-weights", kind,
             "--json", "--host-us", "5"], 0)
    if p.returncode == 0:
        j = json.loads(p.stdout)
        d = j["project"]["decode"]
        tasks[kind] = d["tasks"]
        down = [m for m in d["per_matmul"] if m["name"] == "down"][0]
        if j.get("int4_weights") != kind or (down["slice_k"] == 480) != (kind == "floor"):
            failures.append(f"--int4-weights {kind}: int4_weights {j.get('int4_weights')}, down {down}")
if len(tasks) == 3 and not (tasks["synthetic"] < tasks["floor"] and tasks["q4_0"] < tasks["floor"]):
    failures.append(f"--int4-weights: decode tasks {tasks}, fewer than the floor's expected")
# int4 with the host part measured (no --host-us): its groups of several K-slices are fused
# (their one call stacked at decode); the measurement once stopped in unpack_c_columns there.
for dtype in ("int4", "fp16"):
    p = run([ork_run, "--project", "--synthetic", "qwen2.5-1.5b", "--layers", "1", "--dtype", dtype, "--json"], 0)
    if p.returncode == 0 and json.loads(p.stdout)["project"]["decode"]["tokens_per_s"] <= 0:
        failures.append(f"--project --dtype {dtype} measured: {p.stdout[:300]}")
# int4 of several K-slices end to end (Qwen2.5-1.5B's K = 1536 in two slices at the synthetic
# widths): q/k/v and gate/up fused, each member's slices read to their places in the group's
# slot, every output checked bit for bit on both interfaces; --no-fuse the same unfused.
q15 = os.path.join(tmp, "q15_int4.ork")
run([ork_pack, "--synthetic", "qwen2.5-1.5b", "--layers", "1", "--dtype", "int4", "-o", q15], 0)
# Every order runs every fused group of the plan fused (lib/exec/start_queue.h: the
# sequential order, which waits after each start, ran none so before), none alone.
for dev in ("emu", "emu-rocket"):
    for flags, fused in (([], True), (["--order", "sequential"], True), (["--no-fuse"], False)):
        p = run([ork_run, q15, "--tokens", "2", "--device", dev, "--json"] + flags, 0)
        if p.returncode == 0:
            j = json.loads(p.stdout)
            planned = j.get("fused_planned")
            if (j.get("checked") is not True or (j.get("fused_groups", 0) > 0) != fused
                    or j.get("fused_groups") != planned or j.get("fused_alone") != 0):
                failures.append(f"1.5B int4 {dev} {flags}: checked {j.get('checked')}, fused_groups "
                                f"{j.get('fused_groups')} of {planned} planned, fused_alone {j.get('fused_alone')}")
# int8 of K past 4096 end to end: Qwen2.5-1.5B's down (K = 8960) packed in three K-slices of
# 3008, 3008 and 2944 (the fewest of at most 3072, lib/matmul/plan.h slice_width), every output
# checked bit for bit on both interfaces.
q15_8 = os.path.join(tmp, "q15_int8.ork")
run([ork_pack, "--synthetic", "qwen2.5-1.5b", "--layers", "1", "--dtype", "int8", "-o", q15_8], 0)
for dev in ("emu", "emu-rocket"):
    p = run([ork_run, q15_8, "--tokens", "2", "--device", dev, "--json"], 0)
    if p.returncode == 0 and json.loads(p.stdout).get("checked") is not True:
        failures.append(f"1.5B int8 {dev}: checked {json.loads(p.stdout).get('checked')}")
os.remove(q15_8)
run([ork_run, "--project", "--synthetic", "small", "--dtype", "int4", "--int4-weights", "q8"], 2, "\"q8\"")
run([ork_run, "--project"], 2, "--synthetic NAME")
run([ork_run, model, "--project", "--synthetic", "tiny"], 2, "one of them")
run([ork_run, "--synthetic", "tiny"], 2, "needs --project")
run([ork_run, "--project", "--synthetic", "huge"], 2, "--synthetic huge")
run([ork_run, "--project", "--synthetic", "tiny", "--dtype", "fp8"], 2, "--dtype fp8")
run([ork_run, "--project", "--synthetic", "tiny", "--disk-rate", "0"], 2, "--disk-rate")
run([ork_run, "--project", "--synthetic", "tiny", "--disk-rate", "fast"], 2, "--disk-rate")
run([ork_run, "--project", "--synthetic", "tiny", "--layers", "0"], 2, "--layers")
run([ork_run, "--project", "--synthetic", "tiny", "--host-us", "-1"], 2, "--host-us")
run([ork_run, "--project", "--synthetic", "tiny", "--budget", "12Q"], 2, "--budget 12Q")
run([ork_run, trunc, "--project"], 2, "truncated")
run([ork_run], 2, "MODEL")

# A header whose data offset (0) is before its description: the description's length then
# passed an unsigned difference and was read far past the buffer (a segfault; found while
# writing fuzz/fuzz_pack_file.cpp, reproducer in fuzz/crashes/pack_file/).
def fnv1a(x):
    h = 14695981039346656037  # FNV-1a 64-bit basis
    for c in x:
        h = ((h ^ c) * 1099511628211) & (2**64 - 1)
    return h


bad = bytearray(4096)
bad[0:8] = b"ORKPACK\0"
struct.pack_into("<IIQQQQ", bad, 8, 2, 4096, 4096, 2**64 - 4096, 0, 0)
struct.pack_into("<Q", bad, 56, fnv1a(bytes(bad[:56])))
past = os.path.join(tmp, "past.ork")
open(past, "wb").write(bad)
run([ork_run, past, "--budget", "96K"], 2, "offsets out of order")
# Version 1 (checksums with an FNV-1a basis one digit short) is refused by name, with the fix.
v1 = bytearray(open(model, "rb").read(4096))
struct.pack_into("<I", v1, 8, 1)
old = os.path.join(tmp, "v1.ork")
open(old, "wb").write(v1)
run([ork_run, old, "--budget", "96K"], 2, "packed model version 1 (its checksums use an FNV-1a basis one digit short)")

# --bench-orders: timing runs never checked, correctness runs checked; the targets may be
# met or missed on a tiny model (exit 0 or 1), the JSON has its keys either way.
p = subprocess.run([ork_run, model, "--bench-orders", "--tokens", "2", "--budget", "96K", "--repeat", "2", "--json"],
                   capture_output=True, text=True, env=dict(os.environ, ORK_DEVICE="emu"))
if p.returncode not in (0, 1):
    failures.append(f"--bench-orders: rc {p.returncode}: {p.stderr.strip()}")
else:
    j = json.loads(p.stdout)
    for key in ["orders", "ratios", "targets", "targets_met", "correctness", "checked", "balance_io_over_device"]:
        if key not in j:
            failures.append(f"--bench-orders lacks {key}")
    for o in ["scheduled", "fifo", "sequential"]:
        t = j.get("orders", {}).get(o, {})
        if t.get("checked") is not False or not t.get("check_skipped"):
            failures.append(f"--bench-orders {o}: a timing run must say checked false and why: {t}")
        if t.get("peak_bytes", 1 << 40) > 96 * 1024 or t.get("token_us", {}).get("n") != 2:
            failures.append(f"--bench-orders {o}: {t}")
        if j.get("correctness", {}).get(o, {}).get("checked") is not True:
            failures.append(f"--bench-orders correctness {o}: {j.get('correctness')}")
    for r in ["fifo_over_scheduled", "sequential_over_scheduled"]:
        if set(j.get("ratios", {}).get(r, {})) != {"min", "median", "max", "n"}:
            failures.append(f"--bench-orders ratio {r}: {j.get('ratios')}")
    if j.get("checked") is not True or (p.returncode == 0) != j.get("targets_met"):
        failures.append(f"--bench-orders: rc {p.returncode} against {j.get('targets')}, checked {j.get('checked')}")
# --bench-fuse: on the small shapes (q/k/v and gate/up fuse; tiny's do not), fused and
# unfused runs on both devices, the computing device's checked, the zero-work ones saying why
# not; the fused runs fuse (2 groups x 1 layer x 2 tokens) and the unfused do not. Timings are
# reported, never asserted.
small = os.path.join(tmp, "small1.ork")
run([ork_pack, "--synthetic", "small", "--layers", "1", "-o", small], 0)
p = run([ork_run, small, "--bench-fuse", "--tokens", "2", "--budget", "64M", "--repeat", "2", "--json"], 0)
if p.returncode == 0:
    j = json.loads(p.stdout)
    for dev, want_checked in (("zero_work", False), ("device", True)):
        d = j.get("devices", {}).get(dev, {})
        for run_name, want_groups in (("fused", 4), ("unfused", 0)):
            r = d.get(run_name, {})
            if (r.get("checked") is not want_checked or r.get("fused_groups") != want_groups
                    or r.get("cpu_us_per_token", {}).get("n") != 2 or r.get("calls_us_per_token", {}).get("n") != 2
                    or want_checked == bool(r.get("check_skipped"))):
                failures.append(f"--bench-fuse {dev} {run_name}: {r}")
        if {k: set(v) for k, v in d.get("ratio_fused_over_unfused", {}).items()} != {
                "cpu": {"min", "median", "max", "n"}, "calls": {"min", "median", "max", "n"}}:
            failures.append(f"--bench-fuse {dev} ratios: {d.get('ratio_fused_over_unfused')}")
    if j.get("checked") is not True:
        failures.append(f"--bench-fuse: checked {j.get('checked')}")
run([ork_run, small, "--bench-fuse", "--bench-orders"], 2, "excludes")
run([ork_run, small, "--bench-fuse", "--tokens", "1"], 2, "--tokens must be 2 or more")
run([ork_run, model, "--bench-orders", "--io-rate", "5"], 2, "--io-rate 5")
run([ork_run, model, "--bench-orders", "--io-rate", "-1"], 2, "--io-rate")
run([ork_run, model, "--bench-orders", "--budget", "16K"], 2, "smaller than the largest layer")
run([ork_run, model, "--bench-orders", "--repeat", "0"], 2, "--repeat")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
