#!/usr/bin/env python3
"""llama.cpp's own tools on a whole model through ORK (docs/llama-cpp.md "Whole models").

Runs `llama-simple` (a few greedy tokens) and `llama-bench` (a short prompt and a few
generated tokens, one repetition) on MODEL with GGML_BACKEND_PATH = the backend, ORK_DEVICE =
DEVICE and ORK_GGML_STATS=1. Each must exit 0, llama-bench must report its ORK rows, and the
backend's statistics must say every weight matmul ran on ORK: a positive multiple of the
model's weight matmuls per graph (7 per layer and the output matrix), none declined, each
weight imported once; and for llama-simple libork's own line: one call per MUL_MAT, a
device time where the kernel reports one.

With --too-large: a model larger than the NPU window (synthetic_gguf.py --sparse, Qwen2.5-1.5B's
shapes with 48 layers in F16: 4.96 GB of weight matrices for ORK's buffer against the 4 GiB
window, written into a temporary directory as a hole) must fail to load as a buffer
allocation failure: the backend's line naming the size, llama.cpp's own report, llama-simple
exiting with an error (not a signal), nothing imported. With --too-large-packed the same for
a model whose GGUF bytes fit the window but whose packed copies do not: Q4_0 (18 bytes per 32
weights) with 90 layers is 2.5 GB of matrices, their int8 copies 4.4 GB (docs/llama-cpp.md
"Buffer type and weight import"): the buffer is sized by the packed copies (get_alloc_size).

Usage: check_llama_tools.py LLAMA_BIN_DIR MODEL LIBGGML_ORK DEVICE PER_GRAPH
       check_llama_tools.py --self-test     libork's line is refused when it must be
       check_llama_tools.py --too-large|--too-large-packed LLAMA_BIN_DIR NUMPY_PYTHON SYNTHETIC_GGUF LLAMA_TREE
                            LIBGGML_ORK DEVICE
"""
import os
import re
import subprocess
import sys
import tempfile

from check_logits import STATS, stats_problems

LIBORK = re.compile(r"^ggml-ork: libork calls: (\d+), in libork: ([\d.]+) ms, device: ([\d.]+) ms, "
                    r"emulator compute: ([\d.]+) ms$", re.M)


def libork_problems(stderr, device):
    """libork's figures on the statistics' second line: one libork call per MUL_MAT on ORK
    (the weights are 2-D), and a device time wherever the kernel reports one (rocket does not)."""
    m, counts = LIBORK.search(stderr), STATS.search(stderr)
    if not m or not counts:
        return ["no 'ggml-ork: libork calls: ...' line after the counts"]
    found = []
    if int(m.group(1)) != int(counts.group(1)):
        found.append(f"{m.group(1)} libork calls for {counts.group(1)} MUL_MATs on ORK")
    if device != "emu-rocket" and not float(m.group(3)) > 0:
        found.append(f"device time {m.group(3)} ms on {device}, which reports it")
    return found


def run(what, argv, env):
    r = subprocess.run(argv, env=env, capture_output=True, text=True, errors="replace", timeout=3000)
    print(f"$ {' '.join(argv)}\n{r.stdout}")
    tail = "\n".join(r.stderr.splitlines()[-8:])
    print(f"[{what} stderr, last lines]\n{tail}")
    return r


def too_large(bin_dir, python, generator, tree, library, device, packed=False):
    qtype, layers = ("q4_0", "90") if packed else ("f16", "48")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "too-large.gguf")
        subprocess.run([python, generator, "--llama-cpp", tree, "--arch", "qwen2", "--type", qtype,
                        "--size", "qwen2.5-1.5b", "--layers", layers, "--sparse", "-o", model], check=True)
        env = dict(os.environ, GGML_BACKEND_PATH=library, ORK_DEVICE=device, ORK_GGML_STATS="1")
        r = run("llama-simple", [os.path.join(bin_dir, "llama-simple"), "-m", model, "-n", "2", "Hello"], env)
    found = []
    if r.returncode <= 0:
        found.append(f"llama-simple exited with {r.returncode}, expected an error exit")
    if not re.search(r"^ggml-ork: a buffer of \d+ bytes does not fit the device", r.stderr, re.M):
        found.append("no 'ggml-ork: a buffer of N bytes does not fit the device' line")
    if "unable to allocate ORK buffer" not in r.stderr:
        found.append("llama.cpp did not report 'unable to allocate ORK buffer'")
    if not re.search(r"weight tensors imported: 0$", r.stderr, re.M):
        found.append("weights were imported from a model that did not load")
    return found


def self_test():
    counts = "ggml-ork: MUL_MAT on ORK: 60, declined: 0, weight tensors imported: 15\n"
    line = "ggml-ork: libork calls: {}, in libork: 9.5 ms, device: {} ms, emulator compute: 1.0 ms\n"
    cases = [(counts + line.format(60, "3.5"), "emu", 0), (counts + line.format(60, "0.000"), "emu-rocket", 0),
             (counts + line.format(60, "0.000"), "emu", 1), (counts + line.format(59, "3.5"), "cpu", 1),
             (counts, "cpu", 1), (line.format(60, "3.5"), "cpu", 1)]
    bad = [(t, d, n) for t, d, n in cases if len(libork_problems(t, d)) != n]
    for t, d, n in bad:
        print(f"self-test: {t!r} on {d} should give {n} problem(s)")
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1] in ("--too-large", "--too-large-packed"):
        found = too_large(*sys.argv[2:8], packed=sys.argv[1] == "--too-large-packed")
        for f in found:
            print(f"FAIL {sys.argv[7]}: {f}")
        return 1 if found else 0
    bin_dir, model, library, device, per_graph = sys.argv[1:6]
    per_graph = int(per_graph)
    env = dict(os.environ, GGML_BACKEND_PATH=library, ORK_DEVICE=device, ORK_GGML_STATS="1")
    found = []
    simple = run("llama-simple", [os.path.join(bin_dir, "llama-simple"), "-m", model, "-n", "4", "Hello world"], env)
    if simple.returncode != 0:
        found.append(f"llama-simple exited with {simple.returncode}")
    found += [f"llama-simple: {p}" for p in stats_problems(simple.stderr, per_graph, per_graph, per_graph=True)]
    found += [f"llama-simple: {p}" for p in libork_problems(simple.stderr, device)]
    bench = run("llama-bench", [os.path.join(bin_dir, "llama-bench"), "-m", model, "-p", "16", "-n", "4", "-r", "1"],
                env)
    if bench.returncode != 0:
        found.append(f"llama-bench exited with {bench.returncode}")
    rows = [line for line in bench.stdout.splitlines() if "| ORK " in line and ("pp16" in line or "tg4" in line)]
    if len(rows) != 2:
        found.append(f"llama-bench reported {len(rows)} ORK rows for pp16 and tg4, expected 2")
    found += [f"llama-bench: {p}" for p in stats_problems(bench.stderr, per_graph, per_graph, per_graph=True)]
    for f in found:
        print(f"FAIL {device}: {f}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
