#!/usr/bin/env python3
"""Every libork tool against the one convention of docs/tools.md: --help (exit 0, defaults
shown), --version (exit 0: library version, C API version, device interfaces), a bad-usage
case (exit 2 and a message that names the problem), and each defect the tools once had:
wrapping or NaN numbers, outputs overwriting inputs, --json with --csv, unbounded sizes,
files the tools could not take. Usage: conventions_test.py NAME=PATH ... (one per tool)."""
import json
import os
import struct
import subprocess
import sys
import tempfile

tools = dict(arg.split("=", 1) for arg in sys.argv[1:])
failures = []


def run(*args, timeout=120, env=None):
    e = dict(os.environ)
    e.pop("ORK_DEVICE", None)
    e.update(env or {})
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def expect_run(tool, args, code, needles, what):
    rc, out, err = run(tools[tool], *args)
    text = out + err
    ok = rc == code and all(n in text for n in needles)
    expect(ok, f"{tool} {' '.join(map(str, args))}: {what} (exit {rc}, want {code}; output: {text[-600:]!r})")
    # Never an uncaught exception or a signal: those exit 134/139 or negative.
    expect(rc in (0, 1, 2, 3), f"{tool} {' '.join(map(str, args))}: exit {rc} is not in the table")
    return rc, out, err


# A bad-usage case per tool, and the words its message must contain.
BAD = {
    "ork_info": (["--device", "floppy"], ["unknown device 'floppy'"]),
    "ork_matmul": (["--a", "x.npy", "--b", "y.npy", "--out", "z.npy", "--cores", "-1"],
                   ["--cores: -1 is too small: expected a whole number from 0 to 3"]),
    "sparse_check": (["0", "10", "10"], ["M: 0 is too small: expected a whole number from 1 to 16777216"]),
    "mc_prof": (["-1", "2048", "2048"], ["-1 is too small"]),
    "ork_regdump": (["/dev/zero"], ["is a character device, not a regular file"]),
    "ork_sched": (["x.stream", "--swap-bandwidth", "nan"], ["--swap-bandwidth: 'nan' is not a finite number"]),
    "ork_sched_bench": (["--sizes", "1000000000"], ["--sizes: 1000000000 is too large"]),
    "ork_stream_bench": (["--layers", "-1"], ["--layers: -1 is negative"]),
    "ork_mksafetensors": (["-o", "x.safetensors", "--seed", "-1"], ["--seed: -1 is negative"]),
    "ork_bench": (["--m", "0"], ["--m: 0 is too small"]),
    "ork_pack": (["--synthetic", "tiny", "--layers", "-1", "-o", "x.ork"],
                 ["--layers: -1 is too small: expected a whole number from 1 to 1024"]),
    "ork_run": (["x.ork", "--tokens", "0"], ["--tokens: 0 is too small: expected a whole number from 1 to 100000"]),
}
# What each tool requires, so that an unknown flag is the only problem (CLI11 reports a
# missing required argument before an unexpected one).
REQUIRED = {"ork_matmul": ["--a", "x", "--b", "y", "--out", "z"], "sparse_check": ["4", "32", "32"],
            "ork_regdump": ["x"], "ork_sched": ["x"], "ork_mksafetensors": ["-o", "x"], "ork_pack": ["-o", "x"],
            "ork_run": ["x"]}
DEVICE_TOOLS = ["ork_info", "ork_matmul", "sparse_check", "mc_prof", "ork_bench", "ork_run"]

for name, path in tools.items():
    rc, out, _ = run(path, "--help")
    expect(rc == 0 and "--version" in out and "--json" in out, f"{name} --help: exit 0, lists --version and --json")
    if name in DEVICE_TOOLS:
        expect("--device" in out, f"{name} --help lists --device")
    rc, out, _ = run(path, "--version")
    expect(rc == 0 and out.startswith(name + " ") and "libork" in out and "C API" in out and
           "device interfaces: rknpu, rocket, emu-rknpu, emu-rocket, cpu" in out,
           f"{name} --version: {out!r}")
    args, needles = BAD[name]
    expect_run(name, args, 2, needles, "bad usage names the problem")
    expect_run(name, REQUIRED.get(name, []) + ["--no-such-flag"], 2, ["--no-such-flag"], "an unknown flag is named")

# Strict numbers: no wrap, no NaN, no octal, ranges in plain words (never CLI11's
# "Value 0 not in range 0.000000 to 1797693...").
rc, out, err = expect_run("sparse_check", ["0", "10", "10"], 2, [], "M = 0")
expect("Value 0 not in range" not in err and "000000" not in err, "sparse_check 0: plain words: " + err)
expect_run("sparse_check", ["4", "32", "32", "--seed", "-1"], 2,
           ["--seed: -1 is negative: expected a whole number of at least 0"], "--seed -1 does not wrap")
expect_run("sparse_check", ["4", "32", "32", "--seed", "0x10"], 2, ["'0x10' is not a whole number"], "no hex")
expect_run("sparse_check", ["4", "32", "32", "--random-cells", "1e3"], 2, ["'1e3' is not a whole number"],
           "no floats for counts")
expect_run("sparse_check", ["99999999999999999999", "10", "10"], 2, ["is too large"], "past 64 bits")
expect_run("ork_stream_bench", ["--compute-us", "inf"], 2, ["'inf' is not a finite number"], "no infinity")
expect_run("ork_sched_bench", ["--repeat", "0"], 2, ["--repeat: 0 is too small: expected a whole number from 1"],
           "--repeat is the shared name")
expect_run("mc_prof", ["--json", "--csv"], 2, ["--json excludes --csv"], "--json with --csv is refused")

# --random-cells past M x N: every cell once (was 2.1 GB and 18.7 s for 100 cells).
rc, out, _ = expect_run("sparse_check", ["10", "10", "10", "--random-cells", "100000000", "--device", "cpu", "--json"],
                        0, [], "more random cells than C has")
if rc == 0:
    expect(json.loads(out)["cells_checked"] == 100, "10 x 10: 100 cells checked")
expect_run("sparse_check", ["10", "10", "10", "--random-cells", "10000000000000"], 2,
           ["--random-cells: 10000000000000 is too large"], "--random-cells bounded")
# Operands checked against the memory there is, before anything is allocated.
expect_run("sparse_check", ["16777216", "16777216", "16777216"], 2, ["an operand would exceed"], "huge shape")
expect_run("ork_info", ["--device", "rknpu"], 3, ["rknpu"], "no such device: exit 3")


def write_npy(path, rows, cols, fill):
    header = "{'descr': '|i1', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(bytes([fill]) * (rows * cols))


def write_safetensors(path, names, nbytes=64):
    header, pos = {}, 0
    for n in names:
        header[n] = {"dtype": "U8", "shape": [nbytes], "data_offsets": [pos, pos + nbytes]}
        pos += nbytes
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(pos))


with tempfile.TemporaryDirectory() as tmp:
    a, b = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    write_npy(a, 4, 64, 1)
    write_npy(b, 64, 8, 2)
    before = open(a, "rb").read()
    # Outputs never overwrite inputs, by identity: the same name, another spelling, a link.
    link = os.path.join(tmp, "link.npy")
    os.symlink(a, link)
    hard = os.path.join(tmp, "hard.npy")
    os.link(b, hard)
    for out, flag in [(a, "--a"), (os.path.join(tmp, ".", "a.npy"), "--a"), (link, "--a"), (hard, "--b")]:
        expect_run("ork_matmul", ["--a", a, "--b", b, "--out", out, "--device", "cpu"], 2,
                   ["refusing to overwrite an input", flag], "--out is an input")
    expect(open(a, "rb").read() == before, "A is untouched")
    expect_run("ork_matmul", ["--a", a, "--b", b, "--out", os.path.join(tmp, "c.npy"), "--device", "cpu", "-q"], 0,
               [], "a distinct --out is written")
    # ork_sched: a picture over its own input is refused.
    stream = os.path.join(tmp, "s.stream")
    with open(stream, "w") as f:
        f.write("memory 1K\nbuffer w 64\nload L writes=w cycles=3\n")
    expect_run("ork_sched", [stream, "--trace", stream], 2, ["refusing to overwrite an input"], "--trace FILE")
    expect_run("ork_sched", [tmp], 2, ["is a directory"], "a directory as FILE")

    # ork_stream_bench: a missing --file is an error and creates nothing; --create creates.
    typo = os.path.join(tmp, "typo.safetensors")
    expect_run("ork_stream_bench", ["-f", typo, "--no-fio"], 2, ["no such file", "--create"], "-f typo")
    expect(not os.path.exists(typo), "-f typo created nothing")
    common = ["--no-fio", "--sources", "sync,worker", "--chunk", "4K", "--compute-us", "0", "--json"]
    rc, out, _ = expect_run("ork_stream_bench", ["-f", typo, "--create", "-s", "2M", "-l", "2"] + common, 0, [],
                            "--create writes the file")
    expect(os.path.exists(typo), "--create left the file")
    # GPT-2 names, an embedding-only file and a custom pattern (once a segfault: exit 139).
    gpt2 = os.path.join(tmp, "gpt2.safetensors")
    write_safetensors(gpt2, ["transformer.wte.weight"] +
                      [f"transformer.h.{i}.{t}" for i in range(12) for t in ("attn.c_attn.weight", "mlp.c_fc.weight")])
    rc, out, _ = expect_run("ork_stream_bench", ["-f", gpt2] + common, 0, [], "GPT-2 names")
    if rc == 0:
        expect(json.loads(out)["layers"] == 12, "GPT-2: 12 layers (transformer.h.N)")
    emb = os.path.join(tmp, "emb.safetensors")
    write_safetensors(emb, ["wte", "wpe"])
    rc, out, _ = expect_run("ork_stream_bench", ["-f", emb] + common, 0, [], "embedding-only file")
    if rc == 0:
        expect(json.loads(out)["layers"] == 2, "no numbered names: one layer per tensor")
    rc, out, _ = expect_run("ork_stream_bench", ["-f", gpt2, "--layer-pattern", r"^transformer\.h\.(\d+)\.mlp"] + common,
                            0, [], "--layer-pattern")
    if rc == 0:
        expect(json.loads(out)["layers"] == 12, "--layer-pattern: 12 layers")
    expect_run("ork_stream_bench", ["-f", gpt2, "--layer-pattern", "h("] + common, 2, ["--layer-pattern"],
               "a bad pattern is named")
    # Memory and disk asked for by flags, checked first.
    expect_run("ork_stream_bench", ["--slots", "100000"], 2, ["--slots: 100000 is too large"], "--slots bounded")
    big = os.path.join(tmp, "big.safetensors")
    write_safetensors(big, ["one"], nbytes=64 << 20)
    expect_run("ork_stream_bench", ["-f", big, "--slots", "4096"] + common, 2,
               ["--slots 4096 of 64.00 MiB (the largest layer) needs 256.00 GiB of memory"], "--slots x layer")
    expect_run("ork_mksafetensors", ["-o", os.path.join(tmp, "huge.safetensors"), "--size", "900T"], 2,
               ["--size 900T needs", "is free"], "free space checked first")
    expect(not os.path.exists(os.path.join(tmp, "huge.safetensors")), "nothing written for --size 900T")

    # ork_pack and ork_run: strict numbers, outputs never over inputs, exit 3 without the
    # device, --json for scripts, min / median / max of the token time.
    if "ork_pack" in tools and "ork_run" in tools:
        model = os.path.join(tmp, "tiny.ork")
        rc, out, _ = expect_run("ork_pack", ["--synthetic", "tiny", "--layers", "2", "-o", model, "--json"], 0, [],
                                "a synthetic pack")
        if rc == 0:
            j = json.loads(out)
            expect(j["layers"] == 2 and j["file_bytes"] == os.path.getsize(model), f"ork_pack --json: {j}")
        before = open(model, "rb").read()
        expect_run("ork_pack", [model, "--desc", model, "-o", model], 2, ["refusing to overwrite an input"],
                   "ork_pack -o MODEL")
        expect_run("ork_pack", ["--synthetic", "tiny", "--seed", "-1", "-o", os.path.join(tmp, "y.ork")], 2,
                   ["--seed: -1 is negative"], "ork_pack --seed -1 does not wrap")
        expect_run("ork_pack", ["--synthetic", "tiny", "--layers", "1e3", "-o", os.path.join(tmp, "y.ork")], 2,
                   ["'1e3' is not a whole number"], "ork_pack --layers 1e3")
        expect_run("ork_run", [model, "--trace", model], 2, ["--trace", "refusing to overwrite an input"],
                   "ork_run --trace MODEL")
        expect(open(model, "rb").read() == before, "the packed model is untouched")
        expect_run("ork_run", [model, "--cores", "4"], 2, ["--cores: 4 is too large: expected a whole number from 0 to 3"],
                   "ork_run --cores 4")
        expect_run("ork_run", [model, "--disk-gbs", "nan"], 2, ["--disk-gbs: 'nan' is not a finite number"],
                   "ork_run --disk-gbs nan")
        expect_run("ork_run", [model, "--tokens", "-1"], 2, ["--tokens: -1 is too small"], "ork_run --tokens -1")
        expect_run("ork_run", [model, "--budget", "900T"], 2, ["--budget 900T needs", "available"],
                   "ork_run --budget checked against memory")
        expect_run("ork_run", [model, "--device", "floppy"], 2, ["unknown device 'floppy'"], "ork_run --device floppy")
        expect_run("ork_run", [model, "--budget", "96K", "--device", "rknpu"], 3, ["rknpu"], "ork_run: no device, exit 3")
        expect_run("ork_run", [model, "--json", "--csv"], 2, ["--csv"], "ork_run has no --csv")
        rc, out, _ = expect_run("ork_run", [model, "--budget", "96K", "--tokens", "3", "--device", "emu", "--json"], 0, [],
                                "a checked run")
        if rc == 0:
            j = json.loads(out)
            expect(j["checked"] is True and j["tokens"] == 3 and
                   j["token_min_us"] <= j["token_us"] <= j["token_max_us"], f"ork_run --json: min <= median <= max: {j}")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
