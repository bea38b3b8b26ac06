#!/usr/bin/env python3
"""The logits comparison on one model and device (docs/llama-cpp.md "Whole models").

Runs logits_compare (the CPU backend against ORK, every position) with ORK_DEVICE set and
ORK_GGML_STATS=1, and reads the backend's statistics line besides the program's own verdict:
the comparison is only worth something when the weight matmuls did run on ORK, so the count
of MUL_MATs on ORK must be the expected one (every weight matmul of every graph), none
declined, and each weight imported once.

Usage: check_logits.py LOGITS_COMPARE MODEL LIBGGML_ORK DEVICE --mul-mat N --imported W
                       [--must-refuse] [-- EXTRA ARGUMENTS OF LOGITS_COMPARE]
       --must-refuse: the comparison itself must fail (exit 1 with a FAIL position line),
                      the statistics still as expected: the check can fail
       check_logits.py --self-test     the statistics check refuses what it must
"""
import argparse
import os
import re
import subprocess
import sys

STATS = re.compile(r"^ggml-ork: MUL_MAT on ORK: (\d+), declined: (\d+), weight tensors imported: (\d+)$", re.M)


def stats_problems(stderr, mul_mat, imported, per_graph=False):
    """What is wrong with the backend's statistics (empty list: as expected). `mul_mat` is
    the MUL_MATs expected on ORK, or with per_graph those of one graph: then the count must
    be a positive multiple of it (a tool that runs graphs we do not count)."""
    m = STATS.search(stderr)
    if not m:
        return ["no statistics line from the backend (did the ORK device register?)"]
    ran, declined, got_imported = (int(g) for g in m.groups())
    found = []
    if per_graph and (ran == 0 or ran % mul_mat != 0):
        found.append(f"{ran} MUL_MATs ran on ORK, expected a positive multiple of {mul_mat} (every weight matmul)")
    elif not per_graph and ran != mul_mat:
        found.append(f"{ran} MUL_MATs ran on ORK, expected {mul_mat} (every weight matmul)")
    if declined != 0:
        found.append(f"{declined} MUL_MATs declined, expected none")
    if got_imported != imported:
        found.append(f"{got_imported} weight tensors imported, expected {imported} (each once)")
    return found


def self_test():
    line = "ggml-ork: MUL_MAT on ORK: {}, declined: {}, weight tensors imported: {}\n"
    cases = [("", 1), (line.format(75, 0, 15), 0), (line.format(74, 0, 15), 1),
             (line.format(75, 2, 15), 1), (line.format(75, 0, 30), 1), (line.format(0, 75, 0), 3)]
    bad = [(text, n) for text, n in cases if len(stats_problems(text, 75, 15)) != n]
    per_graph = [(line.format(30, 0, 15), 0), (line.format(45, 0, 15), 0), (line.format(0, 0, 15), 1),
                 (line.format(44, 0, 15), 1), (line.format(45, 1, 14), 2)]
    bad += [(text, n) for text, n in per_graph if len(stats_problems(text, 15, 15, per_graph=True)) != n]
    for text, n in bad:
        print(f"self-test: {text.strip()!r} should give {n} problem(s)")
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    p = argparse.ArgumentParser()
    p.add_argument("program")
    p.add_argument("model")
    p.add_argument("library")
    p.add_argument("device")
    p.add_argument("--mul-mat", type=int, required=True)
    p.add_argument("--imported", type=int, required=True)
    p.add_argument("--must-refuse", action="store_true")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:len(argv) - len(extra) - (1 if extra else 0)])
    env = dict(os.environ, ORK_DEVICE=a.device, ORK_GGML_STATS="1")
    r = subprocess.run([a.program, a.model, a.library] + extra, env=env, capture_output=True, text=True, errors="replace",
                       timeout=3000)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if a.must_refuse:
        refused = r.returncode == 1 and re.search(r"^FAIL position \d+", r.stdout, re.M)
        found = [] if refused else [f"logits_compare exited with {r.returncode}, expected a refused position"]
    else:
        found = [] if r.returncode == 0 else [f"logits_compare exited with {r.returncode}"]
    found += stats_problems(r.stderr, a.mul_mat, a.imported)
    for f in found:
        print(f"FAIL {a.device}: {f}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
