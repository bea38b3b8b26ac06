#!/usr/bin/env python3
"""llama.cpp's own backend test on the ORK backend (docs/llama-cpp.md "Tests").

Runs `test-backend-ops test -b ORK -o OP` with GGML_BACKEND_PATH set to the backend and
ORK_DEVICE to the device, and reads its output, not only its exit status: the ORK device
registered, every case that ran passed (0 FAIL), the count of passed cases matches
test-backend-ops' own summary, and the cases that ran on ORK (not "not supported") cover
every weight type the backend offloads, broadcast batches and M = 1 among them.

Usage: check_backend_ops.py TEST_BACKEND_OPS LIBGGML_ORK DEVICE OP
       check_backend_ops.py --no-device TEST_BACKEND_OPS LIBGGML_ORK
                                    a device that cannot open: the backend registers no
                                    device, says so in one stderr line, llama.cpp goes on
       check_backend_ops.py --self-test     the checks fail on outputs they must refuse
"""
import os
import re
import subprocess
import sys

WEIGHT_TYPES = ("f16", "bf16", "q8_0", "q4_0", "q4_1")
CASE = re.compile(r"^  (MUL_MAT(?:_ID)?)\((.*)\): (.*)$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def problems(text, op):
    """What is wrong with one run's output (empty list: it passed)."""
    text = ANSI.sub("", text)
    found = []
    if not re.search(r"^Backend \d+/\d+: ORK$", text, re.M):
        found.append("the ORK device did not register (no 'Backend N/N: ORK')")
    elif not re.search(r"^  Backend ORK: OK$", text, re.M):
        found.append("test-backend-ops did not report 'Backend ORK: OK'")
    ok, failed, by_type, broadcast, m1 = 0, [], {t: 0 for t in WEIGHT_TYPES}, 0, 0
    for line in text.splitlines():
        m = CASE.match(line)
        if not m or m.group(1) != op:
            continue
        params, result = m.group(2), m.group(3).strip()
        if result.startswith("not supported"):
            continue
        if not result.endswith("OK"):
            failed.append(f"{op}({params}): {result}")
            continue
        ok += 1
        t = re.search(r"type_a=([a-z0-9_]+)", params)
        if t and t.group(1) in by_type:
            by_type[t.group(1)] += 1
        # MUL_MAT: batch dims past one (bs) or repeated weights (nr); MUL_MAT_ID: one
        # activation row for every expert slot of a token (b=1).
        if re.search(r"(bs|nr)=\[(?!1,1\])", params) or re.search(r"(^|,)b=1(,|$)", params):
            broadcast += 1
        if re.search(r"(^|,)n=1(,|$)", params):
            m1 += 1
    found += [f"failed: {f}" for f in failed[:20]]
    summary = re.search(r"^  (\d+)/(\d+) tests passed$", text, re.M)
    if not summary or int(summary.group(1)) != ok or int(summary.group(2)) != ok + len(failed):
        found.append(f"{ok} cases OK here, test-backend-ops says "
                     f"{summary.group(0).strip() if summary else 'nothing'}")
    found += [f"no {op} case with {t} weights ran on ORK" for t, n in by_type.items() if n == 0]
    if broadcast == 0:
        found.append(f"no broadcast {op} case ran on ORK")
    if m1 == 0:
        found.append(f"no {op} case with one activation row (n=1) ran on ORK")
    print(f"{op}: {ok} cases OK on ORK ({', '.join(f'{t} {n}' for t, n in by_type.items())}; "
          f"broadcast {broadcast}, n=1 {m1}), {len(failed)} failed")
    return found


def run(binary, backend, device, op):
    env = dict(os.environ, GGML_BACKEND_PATH=backend, ORK_DEVICE=device)
    proc = subprocess.run([binary, "test", "-b", "ORK", "-o", op], env=env, capture_output=True,
                          text=True, timeout=3000)
    found = problems(proc.stdout, op)
    if proc.returncode != 0:
        found.append(f"test-backend-ops exited with {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    for f in found:
        print(f"check_backend_ops: {device}: {f}")
    return 1 if found else 0


def no_device(binary, backend):
    env = dict(os.environ, GGML_BACKEND_PATH=backend, ORK_DEVICE="no-such-device")
    proc = subprocess.run([binary, "test", "-b", "ORK", "-o", "MUL_MAT"], env=env, capture_output=True,
                          text=True, timeout=600)
    lines = [l for l in proc.stderr.splitlines() if l.startswith("ggml-ork:")]
    found = []
    if proc.returncode != 0:
        found.append(f"test-backend-ops exited with {proc.returncode}")
    if len(lines) != 1 or not lines[0].startswith("ggml-ork: no ORK device (") or "no-such-device" not in lines[0]:
        found.append(f"expected one line 'ggml-ork: no ORK device (... no-such-device ...)', got {lines}")
    if re.search(r"^Backend \d+/\d+: ORK$", proc.stdout, re.M) or "Testing 1 devices" not in proc.stdout:
        found.append("an ORK device was registered, or the CPU device is not the only one")
    for f in found:
        print(f"check_backend_ops --no-device: {f}")
    if not found:
        print(f"no device: {lines[0]}")
    return 1 if found else 0


def self_test():
    good = ("Backend 1/2: CPU\n  Skipping\nBackend 2/2: ORK\n" + "".join(
        f"  MUL_MAT(type_a={t},type_b=f32,m=16,n={n},k=256,bs=[{b},1],nr=[1,1]): \x1b[1;32mOK\x1b[0m\n"
        for t in WEIGHT_TYPES for n, b in ((1, 1), (8, 2))) +
        "  MUL_MAT(type_a=q5_k,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1]): not supported [ORK]\n"
        "  10/10 tests passed\n  Backend ORK: \x1b[1;32mOK\x1b[0m\n")
    bad = {
        "a failure": good.replace("n=8,k=256,bs=[2,1],nr=[1,1]): \x1b[1;32mOK",
                                  "n=8,k=256,bs=[2,1],nr=[1,1]): NMSE = 1 > 0.0005 \x1b[1;31mFAIL", 1),
        "a type not run": good.replace("type_a=bf16", "type_a=f32"),
        "no device": good.replace("Backend 2/2: ORK", "Backend 2/2: CPU"),
        "backend failed": good.replace("Backend ORK: \x1b[1;32mOK", "Backend ORK: \x1b[1;31mFAIL"),
        "a summary that disagrees": good.replace("10/10", "11/11"),
        "no broadcast": good.replace("bs=[2,1]", "bs=[1,1]"),
    }
    errors = [] if not problems(good, "MUL_MAT") else ["a good output was refused"]
    errors += [f"{name} was accepted" for name, text in bad.items() if not problems(text, "MUL_MAT")]
    good_id = ("Backend 1/1: ORK\n" + "".join(
        f"  MUL_MAT_ID(type_a={t},type_b=f32,n_mats=4,n_used=2,b={b},m=16,n={n},k=256,amax=1.000000): OK\n"
        for t in WEIGHT_TYPES for n, b in ((1, 0), (8, 1))) + "  10/10 tests passed\n  Backend ORK: OK\n")
    if problems(good_id, "MUL_MAT_ID"):
        errors.append("a good MUL_MAT_ID output was refused")
    if not problems(good_id.replace(",b=1,", ",b=0,"), "MUL_MAT_ID"):
        errors.append("MUL_MAT_ID with no broadcast case was accepted")
    for e in errors:
        print(f"check_backend_ops --self-test: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if sys.argv[1:2] == ["--no-device"]:
        sys.exit(no_device(*sys.argv[2:4]))
    sys.exit(run(*sys.argv[1:5]))
