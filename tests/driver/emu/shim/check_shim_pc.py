#!/usr/bin/env python3
"""The shim's PC (ORK_EMU_SHIM_PC, docs/kernel-interfaces.md "The LD_PRELOAD shim"): one int8
matmul through ork_matmul on the real rknpu backend under the shim, three ways. Unset: C is
the exact product. zero-work: the call succeeds and C is not the product (the PC computed
nothing). Anything else: the device does not open (exit 3), and stderr names the variable.

Usage: check_shim_pc.py ORK_MATMUL SHIM"""
import os
import struct
import subprocess
import sys
import tempfile

M, K, N = 2, 64, 32


def write_npy(path, descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def read_int32_npy(path):
    with open(path, "rb") as f:
        raw = f.read()
    (hlen,) = struct.unpack("<H", raw[8:10])
    body = raw[10 + hlen:]
    return list(struct.unpack("<%di" % (len(body) // 4), body))


def run(ork_matmul, shim, tmp, pc):
    env = dict(os.environ, LD_PRELOAD=shim)
    env.pop("ORK_EMU_SHIM_PC", None)
    if pc is not None:
        env["ORK_EMU_SHIM_PC"] = pc
    out = os.path.join(tmp, "c_%s.npy" % (pc or "unset"))
    p = subprocess.run([ork_matmul, "--a", os.path.join(tmp, "a.npy"), "--b", os.path.join(tmp, "b.npy"),
                        "-o", out, "-d", "rknpu", "-q"], env=env, capture_output=True, text=True, timeout=300)
    return p, out


def main():
    ork_matmul, shim = sys.argv[1], sys.argv[2]
    a = [((i * 7) % 11) - 5 for i in range(M * K)]
    b = [((i * 5) % 13) - 6 for i in range(K * N)]
    want = [sum(a[m * K + k] * b[k * N + n] for k in range(K)) for m in range(M) for n in range(N)]
    assert any(want), "the product must not be all zeros, or zero-work could not be told apart"
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        write_npy(os.path.join(tmp, "a.npy"), "|i1", (M, K), struct.pack("%db" % (M * K), *a))
        write_npy(os.path.join(tmp, "b.npy"), "|i1", (K, N), struct.pack("%db" % (K * N), *b))
        p, out = run(ork_matmul, shim, tmp, None)
        if p.returncode != 0 or read_int32_npy(out) != want:
            failures.append("unset: exit %d, C %s the product (%s)" % (
                p.returncode, "is not" if p.returncode == 0 else "missing", p.stderr.strip()))
        p, out = run(ork_matmul, shim, tmp, "zero-work")
        if p.returncode != 0 or read_int32_npy(out) == want:
            failures.append("zero-work: exit %d, C computed (%s)" % (p.returncode, p.stderr.strip()))
        p, _ = run(ork_matmul, shim, tmp, "fast-please")
        if p.returncode != 3 or "ORK_EMU_SHIM_PC=fast-please" not in p.stderr:
            failures.append("a bad value: exit %d, stderr %r" % (p.returncode, p.stderr))
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else "%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
