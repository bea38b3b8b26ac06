#!/usr/bin/env python3
"""llama.cpp's own tools on a whole model through ORK (docs/llama-cpp.md "Whole models").

Runs `llama-simple` (a few greedy tokens) and `llama-bench` (a short prompt and a few
generated tokens, one repetition) on MODEL with GGML_BACKEND_PATH = the backend, ORK_DEVICE =
DEVICE and ORK_GGML_STATS=1. Each must exit 0, llama-bench must report its ORK rows, and the
backend's statistics must say every weight matmul ran on ORK: a positive multiple of the
model's weight matmuls per graph (7 per layer and the output matrix), none declined, each
weight imported once.

Usage: check_llama_tools.py LLAMA_BIN_DIR MODEL LIBGGML_ORK DEVICE PER_GRAPH
"""
import os
import subprocess
import sys

from check_logits import stats_problems


def run(what, argv, env):
    r = subprocess.run(argv, env=env, capture_output=True, text=True, errors="replace", timeout=3000)
    print(f"$ {' '.join(argv)}\n{r.stdout}")
    tail = "\n".join(r.stderr.splitlines()[-8:])
    print(f"[{what} stderr, last lines]\n{tail}")
    return r


def main():
    bin_dir, model, library, device, per_graph = sys.argv[1:6]
    per_graph = int(per_graph)
    env = dict(os.environ, GGML_BACKEND_PATH=library, ORK_DEVICE=device, ORK_GGML_STATS="1")
    found = []
    simple = run("llama-simple", [os.path.join(bin_dir, "llama-simple"), "-m", model, "-n", "4", "Hello world"], env)
    if simple.returncode != 0:
        found.append(f"llama-simple exited with {simple.returncode}")
    found += [f"llama-simple: {p}" for p in stats_problems(simple.stderr, per_graph, per_graph, per_graph=True)]
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
