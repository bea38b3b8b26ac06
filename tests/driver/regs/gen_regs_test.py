#!/usr/bin/env python3
"""gen_regs.py refuses a bad register description with a message naming the problem, and
writes no header; the real description generates. Usage: gen_regs_test.py GEN JSON"""
import json
import os
import subprocess
import sys
import tempfile

GEN, REAL = sys.argv[1], sys.argv[2]


def run(desc):
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "d.json"), os.path.join(d, "out.h")
        with open(src, "w") as f:
            json.dump(desc, f)
        p = subprocess.run([sys.executable, GEN, src, out], capture_output=True, text=True)
        return p.returncode, p.stderr, os.path.exists(out)


def base():
    return {"blocks": [{"name": "CNA", "id": "cna", "target": "0x0201", "base": "0x1000", "size": "0x1000"}],
            "registers": [{"block": "CNA", "name": "R", "offset": "0x1020", "fields": [["A", 0, 11], ["B", 16, 11]]}]}


failures = 0


def expect(name, mutate, text):
    global failures
    d = base()
    mutate(d)
    code, err, wrote = run(d)
    if code != 1 or text not in err or wrote:
        print(f"FAIL {name}: exit {code}, header written {wrote}, stderr {err!r}")
        failures += 1
    else:
        print(f"ok   {name}: {err.strip()}")


expect("overlap", lambda d: d["registers"][0]["fields"].append(["C", 10, 2]), "CNA_R.C: overlaps another field")
expect("past bit 31", lambda d: d["registers"][0]["fields"].append(["C", 30, 4]), "CNA_R.C: bits 30..33 are not inside 32 bits")
expect("unaligned", lambda d: d["registers"][0].update(offset="0x1022"), "CNA_R: offset 0x1022 is not 4-byte aligned")
expect("outside window", lambda d: d["registers"][0].update(offset="0x3000"), "CNA_R: offset 0x3000 is outside the CNA window")
expect("unknown block", lambda d: d["registers"][0].update(block="XYZ"), "XYZ_R: unknown block 'XYZ'")
expect("duplicate", lambda d: d["registers"].append(dict(d["registers"][0])), "CNA_R: register described twice")
expect("bad number", lambda d: d["registers"][0].update(offset="0x10z0"), "'0x10z0' is not a number")

with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "npu_regs.h")
    p = subprocess.run([sys.executable, GEN, REAL, out], capture_output=True, text=True)
    text = open(out).read() if p.returncode == 0 else ""
    if "GENERATED FILE - DO NOT EDIT" not in text or "driver/regs/rk3588_npu.json" not in text:
        print(f"FAIL real description: exit {p.returncode} {p.stderr!r}")
        failures += 1
    else:
        print("ok   real description generates with its banner")
sys.exit(1 if failures else 0)
