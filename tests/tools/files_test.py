#!/usr/bin/env python3
"""Files in and out of every tool (docs/tools.md "Conventions": inputs, outputs, FIFOs):

- a FIFO (no writer, no reader) given as any input or output is refused by name, exit 2,
  within a timeout, and left a FIFO (each of these once blocked forever in open(2));
- a device node as an output is refused and left in place (ork_pack once removed a node
  that failed with ENOSPC);
- a failed ork_pack over an existing model (the file size limit: EFBIG, exit 1) leaves it
  byte for byte as it was and no temporary file; SIGINT in the middle of a pack leaves the
  original and no temporary file; a successful pack replaces the output by rename;
- ork_pack computes the exact size of its output before writing (--json predicted_bytes is
  the size written) and refuses a description whose layers are not backed by tensors;
- empty or junk device and budget strings are refused, and long ones echoed capped;
- the packed file's checksums are standard FNV-1a;
- docs/tools.md states the range of sparse_check --random-cells the tool takes.
Usage: files_test.py NAME=PATH ... docs=DOCS (the path of the tools chapter, docs/tools.md)"""
import json
import os
import re
import resource
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

args = dict(arg.split("=", 1) for arg in sys.argv[1:])
docs = args.pop("docs")
tools = args
failures = []
TIMEOUT = 30  # seconds: a tool that blocks on a FIFO fails here instead of hanging the suite


def run(*argv, preexec=None):
    env = dict(os.environ)
    env.pop("ORK_DEVICE", None)
    try:
        p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=TIMEOUT, env=env,
                           preexec_fn=preexec)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {TIMEOUT} s"
    return p.returncode, p.stdout, p.stderr


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def expect_run(tool, argv, code, needles, what, preexec=None):
    rc, out, err = run(tools[tool], *argv, preexec=preexec)
    text = out + err
    expect(rc == code and all(n in text for n in needles),
           f"{tool} {' '.join(map(str, argv))[:300]}: {what} (exit {rc}, want {code}; output: {text[-600:]!r})")
    return rc, out, err


def fnv1a(data):  # the standard 64-bit FNV-1a (http://www.isthe.com/chongo/tech/comp/fnv/)
    h = 0xcbf29ce484222325
    for c in data:
        h = ((h ^ c) * 0x100000001b3) & (2**64 - 1)
    return h


def temp_files(directory):
    return [n for n in os.listdir(directory) if ".tmp-" in n]


def write_npy(path, rows, cols):
    header = "{'descr': '|i1', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(rows * cols))


def description(model_path):
    """The model description inside a packed file (its "model" object)."""
    data = open(model_path, "rb").read()
    n = struct.unpack_from("<Q", data, 24)[0]
    return json.loads(data[4096:4096 + n])["model"]


def write_safetensors(path, tensors):
    """tensors: [(name, shape)] of I8 zeros."""
    header, pos = {}, 0
    for name, shape in tensors:
        header[name] = {"dtype": "I8", "shape": shape, "data_offsets": [pos, pos + shape[0] * shape[1]]}
        pos += shape[0] * shape[1]
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(pos))


def real_model(tmp, model):
    """A safetensors file and a description of one real layer (the tiny model's shapes)."""
    d = description(model)
    d["layers"] = 1
    names = []
    for m in d["matmuls"]:
        names.append((m["tensor"].replace("{layer}", "0"), [m["n"], m["k"]]))
    st, desc = os.path.join(tmp, "real.safetensors"), os.path.join(tmp, "real.json")
    write_safetensors(st, names)
    with open(desc, "w") as f:
        json.dump(d, f)
    return st, desc, d


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "tiny.ork")
    rc, out, _ = expect_run("ork_pack", ["--synthetic", "tiny", "--layers", "2", "-o", model, "--json"], 0, [],
                            "a synthetic pack")
    j = json.loads(out) if rc == 0 else {}
    size = os.path.getsize(model)
    expect(j.get("predicted_bytes") == size == j.get("file_bytes"),
           f"the exact size computed before writing is the size written: {j}, {size} bytes")
    head = open(model, "rb").read(4096)
    expect(struct.unpack_from("<I", head, 8)[0] == 5, "packed model version 5")
    expect(struct.unpack_from("<Q", head, 56)[0] == fnv1a(head[:56]), "header checksum is standard FNV-1a")
    st, desc, d = real_model(tmp, model)
    a, b = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    write_npy(a, 4, 64)
    write_npy(b, 64, 8)
    stream = os.path.join(tmp, "s.stream")
    with open(stream, "w") as f:
        f.write("memory 1K\nbuffer w 64\nload L writes=w cycles=3\n")

    # FIFOs, as every input and output: refused by name, exit 2, never waited on.
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    out = os.path.join(tmp, "out.ork")
    for tool, argv, needles in [
        ("ork_run", [fifo], ["a FIFO"]),
        ("ork_run", [model, "--budget", "96K", "--device", "cpu", "--trace", fifo], ["--trace", "a FIFO"]),
        ("ork_run", [model, "--budget", "96K", "--device", "cpu", "--plan-out", fifo], ["--plan-out", "a FIFO"]),
        ("ork_pack", [fifo, "--desc", desc, "-o", out], ["a FIFO"]),
        ("ork_pack", [st, "--desc", fifo, "-o", out], ["--desc", "a FIFO"]),
        ("ork_pack", [st, "--desc", desc, "-o", fifo], ["--out", "a FIFO"]),
        ("ork_pack", ["--synthetic", "tiny", "-o", fifo], ["--out", "a FIFO"]),
        ("ork_matmul", ["--a", fifo, "--b", b, "--out", os.path.join(tmp, "c.npy"), "--device", "cpu"], ["a FIFO"]),
        ("ork_matmul", ["--a", a, "--b", b, "--out", fifo, "--device", "cpu"], ["a FIFO"]),
        ("ork_regdump", [fifo], ["a FIFO"]),
        ("ork_sched", [fifo], ["a FIFO"]),
        ("ork_sched", [stream, "--trace", fifo], ["a FIFO"]),
        ("ork_stream_bench", ["-f", fifo, "--no-fio"], ["a FIFO"]),
        ("ork_mksafetensors", ["-o", fifo, "--size", "1M"], ["a FIFO"]),
    ]:
        rc, _, _ = expect_run(tool, argv, 2, needles, "a FIFO is refused by name")
        expect(stat.S_ISFIFO(os.stat(fifo).st_mode), f"{tool}: the FIFO is left a FIFO")
    expect(not os.path.exists(out) and not temp_files(tmp), "nothing written beside a refused output")

    # A device node as the output: refused, left in place (a copy of /dev/full, which fails
    # every write with ENOSPC; /dev/null where mknod is not allowed).
    node = os.path.join(tmp, "full")
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        node = "/dev/null"
    for tool, argv in [("ork_pack", ["--synthetic", "tiny", "-o", node]),
                       ("ork_pack", [st, "--desc", desc, "-o", node]),
                       ("ork_matmul", ["--a", a, "--b", b, "--out", node, "--device", "cpu"]),
                       ("ork_mksafetensors", ["-o", node, "--size", "1M"])]:
        expect_run(tool, argv, 2, ["a character device, not a regular file"], "a device node output is refused")
        expect(os.path.exists(node) and stat.S_ISCHR(os.stat(node).st_mode), f"{tool}: the node is left in place")

    # A failed pack over an existing model (the file size limit: EFBIG, a failed write, exit 1)
    # leaves the model as it was and no temporary file.
    before = open(model, "rb").read()

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
    expect_run("ork_pack", ["--synthetic", "tiny", "--layers", "3", "-o", model], 1, ["EFBIG"],
               "a write past the file size limit is a failed run (exit 1)", preexec=small_files)
    expect(open(model, "rb").read() == before, "a failed pack leaves the existing model byte for byte")
    expect(not temp_files(tmp), f"a failed pack leaves no temporary file: {temp_files(tmp)}")

    # A successful pack replaces the output by rename: another inode, the old permissions.
    os.chmod(model, 0o640)
    ino = os.stat(model).st_ino
    expect_run("ork_pack", ["--synthetic", "tiny", "--layers", "3", "-o", model], 0, [], "a pack over a model")
    st_after = os.stat(model)
    expect(st_after.st_ino != ino and stat.S_IMODE(st_after.st_mode) == 0o640,
           "the output is replaced by rename, with its permission bits")
    before = open(model, "rb").read()

    # SIGINT in the middle of a pack: the original stays, the temporary file goes.
    # SIGINT at its default disposition in the child (a runner may start tests with it ignored).
    p = subprocess.Popen([tools["ork_pack"], "--synthetic", "qwen2.5-1.5b", "--layers", "8", "-o", model],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = False
    deadline = time.time() + TIMEOUT
    while time.time() < deadline and p.poll() is None:
        temps = temp_files(tmp)
        if temps and os.path.getsize(os.path.join(tmp, temps[0])) > (1 << 20):
            seen = True
            break
        time.sleep(0.005)
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    expect(seen, "the pack wrote a temporary file beside the output")
    expect(p.returncode == -signal.SIGINT, f"SIGINT ends the pack by the signal (returncode {p.returncode})")
    expect(open(model, "rb").read() == before, "an interrupted pack leaves the original byte for byte")
    expect(not temp_files(tmp), f"an interrupted pack leaves no temporary file: {temp_files(tmp)}")

    # Sizes bounded by the input: a description's layers must be backed by tensors of their own.
    many = dict(d, layers=100000)
    many["matmuls"] = [dict(m, tensor=m["tensor"].replace("{layer}", "0")) for m in d["matmuls"]]
    many_desc = os.path.join(tmp, "many.json")
    with open(many_desc, "w") as f:
        json.dump(many, f)
    expect_run("ork_pack", [st, "--desc", many_desc, "-o", out], 2,
               ["100000 layers x 7 matmuls name 700000 tensors; the file holds 7"], "layers not backed by tensors")
    expect(not os.path.exists(out) and not temp_files(tmp), "nothing written for an unbacked description")
    rc, stdout, _ = expect_run("ork_pack", [st, "--desc", desc, "-o", out, "--json"], 0, [], "a real pack")
    if rc == 0:
        j = json.loads(stdout)
        expect(j["predicted_bytes"] == os.path.getsize(out), f"exact size of a real pack: {j}")

    # Device and budget strings: empty or junk refused, never the default; long ones capped.
    expect_run("ork_info", ["--device", ""], 2, ["--device: an empty value"], "--device \"\"")
    expect_run("ork_info", ["--device", "emu:foo"], 2, ["emu:foo", "only rknpu, rocket and auto take a :NODE"],
               "--device emu:foo")
    expect_run("ork_run", [model, "--budget", ""], 2, ["--budget: an empty value"], "--budget \"\"")
    rc, o, e = expect_run("ork_info", ["--device", "x" * 100000], 2, ["(100000 bytes)"], "a 100 KB device name")
    expect(len(o + e) < 2000, f"a 100 KB device name is echoed capped ({len(o + e)} bytes of output)")
    for argv in (["1", "1", "1", "--seed", "9" * 100000], ["1", "1", "1", "--dtype", "y" * 100000]):
        rc, o, e = run(tools["sparse_check"], *argv)
        expect(rc == 2 and " bytes)" in e and len(o + e) < 2000,
               f"a 100 KB value of {argv[3]} is refused and echoed capped (exit {rc}, {len(o + e)} bytes)")

# One truth for sparse_check --random-cells: docs/tools.md states the bound the tool takes.
text = open(docs).read()
m = re.search(r"`--random-cells` random cells \(default 1024; 0 to 2\^(\d+)", text)
expect(m is not None, "docs/tools.md states the range of --random-cells")
if m:
    bound = 2 ** int(m.group(1))
    expect_run("sparse_check", ["1", "1", "1", "--device", "cpu", "--random-cells", str(bound)], 0, [],
               f"--random-cells {bound} (the documented bound) is taken")
    expect_run("sparse_check", ["1", "1", "1", "--device", "cpu", "--random-cells", str(bound + 1)], 2,
               ["too large"], f"--random-cells {bound + 1} (past the documented bound) is refused")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
