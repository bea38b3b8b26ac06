#!/usr/bin/python3
"""Synthetic GGUF models for the ggml backend (docs/llama-cpp.md "Whole models").

Random weights (seeded, so a model is a function of its arguments) in the Llama or Qwen2
architecture, F16, Q8_0 or Q4_0 matrices (norms and Qwen2's biases F32), with a real
vocabulary: every tokenizer.* key copied from one of llama.cpp's models/ggml-vocab-*.gguf.
Needs numpy (Debian python3-numpy) and gguf-py from the llama.cpp tree (--llama-cpp TREE).

Usage: synthetic_gguf.py --llama-cpp TREE --arch llama|qwen2 --type f16|q8_0|q4_0
                         --size tiny|qwen2.5-1.5b [--layers L] [--seed S] [--sparse] -o OUT.gguf
       --sparse: F16 or Q4_0 shapes with the data left a hole (zeros, no disk), for a model
       larger than the NPU window that must fail at its buffer allocation, before its data is read
"""
import argparse
import os
import pathlib
import struct
import sys

# The shapes. qwen2.5-1.5b: Qwen/Qwen2.5-1.5B's config.json (hidden 1536, intermediate 8960,
# 28 layers, 12 heads, 2 KV heads, rope theta 1e6, rms eps 1e-6), vocabulary from the file.
SIZES = {
    "tiny": dict(n_embd=256, n_ff=512, n_layer=2, n_head=4, n_head_kv=2, ctx=512),
    "qwen2.5-1.5b": dict(n_embd=1536, n_ff=8960, n_layer=28, n_head=12, n_head_kv=2, ctx=4096),
}
VOCABS = {"llama": "ggml-vocab-llama-spm.gguf", "qwen2": "ggml-vocab-qwen2.gguf"}


# GGUF's metadata value types and their numpy forms (ggml-org/llama.cpp:ggml/docs/gguf.md "File Structure":
# gguf_metadata_value_type; 8 = STRING, 9 = ARRAY, the rest fixed-size little-endian).
GGUF_SCALARS = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "<u1",
                10: "<u8", 11: "<i8", 12: "<f8"}
GGUF_STRING, GGUF_ARRAY = 8, 9


def read_metadata(np, path):
    """The key/value pairs of a GGUF file as {key: (type, value, item type)}: arrays of
    numbers as numpy arrays, strings as bytes. gguf-py's GGUFReader builds numpy views per
    string and took 100 s for the Qwen2 vocabulary's 151,936 tokens and merges on this
    machine; this walk of the same header takes under a second."""
    data = memoryview(pathlib.Path(path).read_bytes())
    pos = 0

    def take(fmt):
        nonlocal pos
        (v,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take("<Q")
        pos += n
        return bytes(data[pos - n:pos])

    def value(vtype):
        nonlocal pos
        if vtype == GGUF_STRING:
            return string()
        dt = np.dtype(GGUF_SCALARS[vtype])
        v = np.frombuffer(data, dt, 1, pos)[0]
        pos += dt.itemsize
        return v

    if bytes(data[:4]) != b"GGUF" or struct.unpack_from("<I", data, 4)[0] != 3:
        raise SystemExit(f"{path}: not a GGUF version 3 file")
    pos = 8
    take("<Q")  # tensor count
    fields = {}
    for _ in range(take("<Q")):
        key = string().decode()
        vtype = take("<I")
        if vtype != GGUF_ARRAY:
            fields[key] = (vtype, value(vtype), None)
            continue
        itype, count = take("<I"), take("<Q")
        if itype == GGUF_STRING:
            items = [string() for _ in range(count)]
        else:
            dt = np.dtype(GGUF_SCALARS[itype])
            items = np.frombuffer(data, dt, count, pos)
            pos += dt.itemsize * count
        fields[key] = (vtype, items, itype)
    return fields


def copy_vocab(np, gguf, writer, path):
    """Every tokenizer.* key of `path`, with its type, into `writer`; returns the vocab size."""
    n_vocab = 0
    for name, (vtype, value, itype) in read_metadata(np, path).items():
        if not name.startswith("tokenizer."):
            continue
        if vtype == GGUF_ARRAY:
            items = value if itype == GGUF_STRING else value.tolist()
            writer.add_key_value(name, items, gguf.GGUFValueType(vtype), sub_type=gguf.GGUFValueType(itype))
            if name == "tokenizer.ggml.tokens":
                n_vocab = len(items)
        else:
            v = value if vtype == GGUF_STRING else value.item()
            writer.add_key_value(name, v, gguf.GGUFValueType(vtype))
    return n_vocab


def matrix(np, rng, rows, cols, qtype, gguf):
    """rows x cols (ggml: ne0 = cols) of the given type, values ~ N(0, 1/sqrt(cols))."""
    w = rng.standard_normal((rows, cols), dtype=np.float32) / np.float32(np.sqrt(cols))
    if qtype == "f16":
        return w.astype(np.float16), None
    t = gguf.GGMLQuantizationType.Q8_0 if qtype == "q8_0" else gguf.GGMLQuantizationType.Q4_0
    return gguf.quants.quantize(w, t), t


def write_hole(w, gguf):
    """The tensor infos, then the data section as a hole of its size (reads as zeros, takes
    no disk): a model that must be refused before its data is read (ggml-org/llama.cpp:ggml/docs/gguf.md: each
    tensor's data padded to general.alignment, the section starting aligned)."""
    w.write_ti_data_to_file()
    f = w.fout[0]
    size = sum(gguf.GGUFWriter.ggml_pad(ti.nbytes, w.data_alignment) for ti in w.tensors[0].values())
    f.truncate(gguf.GGUFWriter.ggml_pad(f.tell(), w.data_alignment) + size)


def write(args):
    sys.path.insert(0, str(pathlib.Path(args.llama_cpp) / "gguf-py"))
    import numpy as np
    import gguf
    s = dict(SIZES[args.size])
    if args.layers:
        s["n_layer"] = args.layers
    rng = np.random.default_rng(args.seed)
    tmp = args.output + ".tmp"
    w = gguf.GGUFWriter(tmp, args.arch)
    w.add_name(f"synthetic {args.arch} {args.size} {args.type}")
    n_vocab = copy_vocab(np, gguf, w, str(pathlib.Path(args.llama_cpp) / "models" / VOCABS[args.arch]))
    w.add_context_length(s["ctx"])
    w.add_embedding_length(s["n_embd"])
    w.add_block_count(s["n_layer"])
    w.add_feed_forward_length(s["n_ff"])
    w.add_head_count(s["n_head"])
    w.add_head_count_kv(s["n_head_kv"])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1e6 if args.arch == "qwen2" else 1e4)
    w.add_file_type({"f16": 1, "q8_0": 7, "q4_0": 2}[args.type])
    e, ff = s["n_embd"], s["n_ff"]
    kv = e // s["n_head"] * s["n_head_kv"]

    def add(name, rows, cols):
        if args.sparse and args.type == "q4_0":  # 18 bytes per block of 32 (ggml/src/ggml-common.h block_q4_0)
            nbytes = rows * cols // 32 * 18
            w.add_tensor_info(name, (rows, cols // 32 * 18), np.uint8, nbytes, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
            return
        if args.sparse:
            w.add_tensor_info(name, (rows, cols), np.float16, rows * cols * 2)
            return
        data, t = matrix(np, rng, rows, cols, args.type, gguf)
        w.add_tensor(name, data, raw_dtype=t)

    def vec(name, n, value=None):
        if args.sparse:
            w.add_tensor_info(name, (n,), np.float32, n * 4)
            return
        v = np.full(n, value, np.float32) if value is not None else rng.standard_normal(n).astype(np.float32) * 0.02
        w.add_tensor(name, v)

    add("token_embd.weight", n_vocab, e)
    vec("output_norm.weight", e, 1.0)
    add("output.weight", n_vocab, e)
    for i in range(s["n_layer"]):
        b = f"blk.{i}."
        vec(b + "attn_norm.weight", e, 1.0)
        add(b + "attn_q.weight", e, e)
        add(b + "attn_k.weight", kv, e)
        add(b + "attn_v.weight", kv, e)
        add(b + "attn_output.weight", e, e)
        if args.arch == "qwen2":
            vec(b + "attn_q.bias", e)
            vec(b + "attn_k.bias", kv)
            vec(b + "attn_v.bias", kv)
        vec(b + "ffn_norm.weight", e, 1.0)
        add(b + "ffn_gate.weight", ff, e)
        add(b + "ffn_up.weight", ff, e)
        add(b + "ffn_down.weight", e, ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    if args.sparse:
        write_hole(w, gguf)
    else:
        w.write_tensors_to_file()
    w.close()
    os.replace(tmp, args.output)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--llama-cpp", required=True, help="the llama.cpp source tree (gguf-py, models/)")
    p.add_argument("--arch", choices=sorted(VOCABS), required=True)
    p.add_argument("--type", choices=["f16", "q8_0", "q4_0"], required=True)
    p.add_argument("--size", choices=sorted(SIZES), default="tiny")
    p.add_argument("--layers", type=int, default=0, help="override the size's layer count")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sparse", action="store_true",
                   help="F16 or Q4_0 shapes, the data a hole of zeros: for a model too large to load")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    if args.sparse and args.type == "q8_0":
        p.error("--sparse writes F16 or Q4_0 tensors: use --type f16 or q4_0")
    write(args)


if __name__ == "__main__":
    main()
