#!/usr/bin/env python3
"""ork_pack and ork_run on hostile input (docs/reliability.md "Hostile input"): a packed
description nested 100,000 deep (once a SIGSEGV), numbers that once narrowed silently
(4294967298 layers, 1.9, a K of 64.7, a shift of 2^32 + 3, a layer index of 2^32, an offset
of 8192.5), and a model 2^20 wide under `ulimit -v 3000000`, whose --m 2048 once ended in
std::bad_alloc on the device thread (exit 134): now refused before the run, naming --m."""
import atexit
import json
import os
import platform
import resource
import struct
import subprocess
import sys
import shutil
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from packed_format import fnv1a, packed_head, seal  # noqa: E402 (the head's layout, written once)

ork_pack, ork_run = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="ork_run_hostile_")
atexit.register(shutil.rmtree, tmp, True)  # the scratch directory goes with the run
failures = []


def run(args, want_rc, want_text=None, limit_kib=None):
    def lower():
        resource.setrlimit(resource.RLIMIT_AS, (limit_kib * 1024, resource.RLIM_INFINITY))
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, ORK_DEVICE="emu"),
                       preexec_fn=lower if limit_kib else None)
    if p.returncode != want_rc or (want_text and want_text not in p.stderr + p.stdout):
        failures.append(f"{' '.join(args)}: rc {p.returncode} (want {want_rc}), "
                        f"wanted {want_text!r}; stderr: {p.stderr.strip()[:400]}")
    return p


# Nesting: refused before anything recurses, exit 2 naming the limit.
deep = os.path.join(tmp, "deep.ork")
open(deep, "wb").write(packed_head(b'{"model":' + b"[" * 100000 + b"]" * 100000 + b',"tensors":[]}'))
run([ork_run, deep], 2, "nested more than 64 levels")
desc = os.path.join(tmp, "deep.json")
open(desc, "w").write("[" * 100000 + "]" * 100000)
run([ork_pack, os.path.join(tmp, "none.safetensors"), "--desc", desc, "-o", os.path.join(tmp, "x.ork")], 2,
    "nested more than 64 levels")

# Numbers in a description: integers in range or named with the range.
base = {"dtype": "int8", "hidden": 64, "layers": 2, "matmuls": [{"name": "q", "k": 64, "n": 64, "input": ["x"]}],
        "output": ["x", "q"]}
for change, want in [({"layers": 4294967298}, '"layers" = 4294967298: must be an integer in 1..2147483647'),
                     ({"layers": 1.9}, '"layers" = 1.9: must be an integer'),
                     ({"matmuls": [dict(base["matmuls"][0], k=64.7)]}, '"k" = 64.7: must be an integer in 1..1048576'),
                     ({"matmuls": [dict(base["matmuls"][0], shift=2**32 + 3)]},
                      '"shift" = 4294967299: must be an integer in 0..31')]:
    open(desc, "w").write(json.dumps(dict(base, **change)))
    run([ork_pack, os.path.join(tmp, "none.safetensors"), "--desc", desc, "-o", os.path.join(tmp, "x.ork")], 2, want)

# Numbers in a packed file: a layer index of 2^32 (once layer 0), an offset of 8192.5 (once 8192).
model = os.path.join(tmp, "tiny.ork")
run([ork_pack, "--synthetic", "tiny", "--layers", "2", "-o", model], 0)
data = open(model, "rb").read()
table = json.loads(data[4096:4096 + struct.unpack_from("<Q", data, 24)[0]])
for i, j, value, want in [(0, 0, 2**32, "tensors[0][0] = 4294967296: must be an integer in 0..2147483647"),
                          (1, 2, None, "tensors[1][2] = "),
                          (2, 3, -4096, "tensors[2][3] = -4096: must be an integer")]:
    d = json.loads(json.dumps(table))
    d["tensors"][i][j] = value if value is not None else d["tensors"][i][j] + 0.5
    text = json.dumps(d).encode()
    b = bytearray(data)
    data_offset = struct.unpack_from("<Q", b, 32)[0]
    b[4096:data_offset] = text + bytes(data_offset - 4096 - len(text))
    struct.pack_into("<Q", b, 24, len(text))
    struct.pack_into("<Q", b, 48, fnv1a(text))
    seal(b)
    bad = os.path.join(tmp, "bad_table.ork")
    open(bad, "wb").write(b)
    run([ork_run, bad, "--budget", "96K"], 2, want)

# A model 2^20 wide (one 2^20 x 1 int8 matmul, 33 MB packed) under ulimit -v 3000000: --m 2048
# is refused before the run naming --m; --m 1 still runs and checks.
hidden = 1 << 20
header = json.dumps({"w": {"dtype": "I8", "shape": [1, hidden], "data_offsets": [0, hidden]}}).encode()
header += b" " * (-len(header) % 8)
st = os.path.join(tmp, "wide.safetensors")
open(st, "wb").write(struct.pack("<Q", len(header)) + header + bytes(i % 7 for i in range(hidden)))
open(desc, "w").write(json.dumps({"dtype": "int8", "hidden": hidden, "layers": 1, "output": ["x"],
                                  "matmuls": [{"name": "w", "tensor": "w", "k": hidden, "n": 1, "input": ["x"]}]}))
wide = os.path.join(tmp, "wide.ork")
run([ork_pack, st, "--desc", desc, "-o", wide], 0)
# A lowered RLIMIT_AS starves AddressSanitizer's shadow memory (terabytes reserved at start),
# so an ASan build (CI's build-san) leaves the address-space cases out; the native builds
# (gcc, TSan) run them.
asan = any(n in subprocess.run(["ldd", ork_run], capture_output=True, text=True).stdout
           for n in ("libasan", "libclang_rt.asan"))
# qemu-user (CI's arm64 step) does not apply RLIMIT_AS to the program it runs: the cases need
# a binary of this machine (ELF e_machine: 0x3e x86-64, 0xb7 aarch64).
machine = {0x3E: "x86_64", 0xB7: "aarch64"}.get(int.from_bytes(open(ork_run, "rb").read(20)[18:20], "little"))
if not asan and machine == platform.machine():
    run([ork_run, wide, "--tokens", "1", "--device", "emu", "--m", "2048"], 2, "--m 2048 (activations of up to",
        limit_kib=3000000)
    p = run([ork_run, wide, "--tokens", "1", "--device", "emu", "--m", "2048"], 2, "RLIMIT_AS", limit_kib=3000000)
    if "terminate" in p.stderr or p.returncode < 0:
        failures.append(f"--m 2048 under ulimit -v aborted: {p.stderr.strip()[:300]}")
    run([ork_run, wide, "--tokens", "1", "--device", "emu", "--m", "1"], 0, "checked", limit_kib=3000000)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
