#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/ (run from anywhere; rerun after a format change).
Small valid inputs of each format, so that the fuzzer starts from the parsers' deep paths."""
import json, os, shutil, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'support'))
from packed_format import fnv1a, packed_head, seal  # noqa: E402 (the head's layout, written once)


def put(name, fname, data):
    d = os.path.join(HERE, 'corpus', name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, fname), 'wb') as f:
        f.write(data.encode() if isinstance(data, str) else data)


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, nbytes)] laid out back to back."""
    header, off = {}, 0
    for name, dtype, shape, nbytes in tensors:
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [off, off + nbytes]}
        off += nbytes
    if metadata:
        header['__metadata__'] = metadata
    h = json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    return struct.pack('<Q', len(h)) + h + bytes(i % 251 for i in range(off))


put('safetensors', 'llama_2_layers', safetensors(
    [('model.embed_tokens.weight', 'F16', [4, 8], 64)] +
    [(f'model.layers.{i}.{p}.weight', 'I8', [8, 8], 64) for i in range(2) for p in ('q', 'k')] +
    [('model.norm.weight', 'F32', [8], 32)], {'format': 'pt'}))
put('safetensors', 'gpt2_style', safetensors(
    [(f'transformer.h.{i}.attn.c_attn.weight', 'BF16', [2, 6], 24) for i in range(3)]))
put('safetensors', 'empty', safetensors([]))
put('safetensors', 'scalar_and_zero', safetensors([('a', 'F64', [], 8), ('b', 'U8', [0, 3], 0)]))

os.makedirs(os.path.join(HERE, 'corpus', 'stream'), exist_ok=True)
for f in ('example1.stream', 'example2.stream'):
    shutil.copy(os.path.join(ROOT, 'tools', 'ork_sched', 'examples', f),
                os.path.join(HERE, 'corpus', 'stream', 'ork_sched_' + f))
put('stream', 'sizes_and_ranges', 'memory 1M\ncores 3\nbuffer a 2K\nbuffer b 1KiB xram\n'
    'load L1 writes=a[0:512] cycles=10\nstart P1 reads=a[0:512] writes=a[512:256] cycles=5\n'
    'wait P1\nstore S1 reads=a[512:256] writes=b cycles=3 # done\n')


def npy(descr, shape, data, major=1, fortran=False):
    dims = ', '.join(str(s) for s in shape) + (',' if len(shape) == 1 else '')
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, 'True' if fortran else 'False', dims)
    lenbytes = 2 if major == 1 else 4
    pad = -(6 + 2 + lenbytes + len(d) + 1) % 64
    h = (d + ' ' * pad + '\n').encode()
    return (b'\x93NUMPY' + bytes([major, 0]) +
            (struct.pack('<H', len(h)) if major == 1 else struct.pack('<I', len(h))) + h + data)


put('npy', 'int8_2x3_v1', npy('|i1', (2, 3), bytes(range(6))))
put('npy', 'int32_2x2_v2', npy('<i4', (2, 2), struct.pack('<4i', 1, -2, 3, -4), major=2))
put('npy', 'fp16_1x4_v3', npy('<f2', (1, 4), struct.pack('<4e', 1, -2, 0.5, 65504), major=3))
put('npy', 'fp32_fortran', npy('<f4', (2, 1), struct.pack('<2f', 1, 2), fortran=True))
put('npy', 'int8_1d', npy('|i1', (3,), b'abc'))


def entry(target, value, reg):
    return struct.pack('<Q', (target << 48) | (value << 16) | reg)


# CNA_DATA_SIZE0-like writes, a CORE and a DPU write, padding, the 4-entry trailer, unknowns.
put('regcmd', 'task', b''.join([
    entry(0x0201, 0x00010040, 0x1020), entry(0x0201, 0x12345678, 0x1024),
    entry(0x0801, 0x00000007, 0x3010), entry(0x1001, 0x000000ff, 0x4004),
    entry(0x0000, 0, 0),                                   # padding
    entry(0x0041, 0, 0), entry(0x0101, 0x40001000, 0x0010),  # trailer marker, chain base
    entry(0x0101, 0x00000020, 0x0014), entry(0x0081, 0x0000000d, 0x0008)]))
put('regcmd', 'unknown_targets', entry(0xffff, 0xdeadbeef, 0xffff) + entry(0x0201, 1, 0x0ffe))


def packed_weights_seeds(libork):
    """Blobs exported by libork itself (ctypes): int8, fp16 and int4 weights of a few shapes."""
    import ctypes
    lib = ctypes.CDLL(libork)
    dev = ctypes.c_void_p()
    if lib.ork_device_open(b'cpu', ctypes.byref(dev)) != 0:
        raise SystemExit('ork_device_open(cpu) failed')
    for name, dtype, k, n in [('int8_4x8', 1, 4, 8), ('fp16_3x5', 2, 3, 5), ('int4_8x16', 3, 8, 16),
                              ('int8_33x70', 1, 33, 70)]:
        nbytes = {1: k * n, 2: 2 * k * n, 3: (k * n + 1) // 2}[dtype]
        data = (ctypes.c_uint8 * nbytes)(*[(i * 37 + 11) % 251 for i in range(nbytes)])
        if dtype == 2:  # binary16 patterns of small finite values
            data = (ctypes.c_uint16 * (k * n))(*[0x3c00 ^ (i % 1024) for i in range(k * n)])
        w = ctypes.c_void_p()
        if lib.ork_weights_create(dev, dtype, ctypes.c_int64(k), ctypes.c_int64(n), data, ctypes.byref(w)) != 0:
            raise SystemExit('ork_weights_create failed for ' + name)
        size = ctypes.c_size_t()
        lib.ork_weights_export_packed(w, None, ctypes.c_size_t(0), ctypes.byref(size))
        buf = (ctypes.c_uint8 * size.value)()
        if lib.ork_weights_export_packed(w, buf, size, ctypes.byref(size)) != 0:
            raise SystemExit('ork_weights_export_packed failed for ' + name)
        put('packed_weights', name, bytes(buf))
        lib.ork_weights_destroy(w)
    lib.ork_device_close(dev)


def pack_file_seeds(ork_pack):
    """The heads (header + description, up to the data offset) of packed files ork_pack wrote.
    The tiny ones were written at format version 2 (rows of six) and are kept as they are, the
    reader's old-version path; small_int4_widths_v3 is version 3 (each int4 tensor's width)."""
    import subprocess, tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in [('tiny_int8_2_layers', ['--synthetic', 'tiny', '--layers', '2']),
                           ('tiny_int4_1_layer', ['--synthetic', 'tiny', '--layers', '1', '--dtype', 'int4']),
                           ('tiny_fp16_1_layer', ['--synthetic', 'tiny', '--layers', '1', '--dtype', 'fp16']),
                           ('small_int4_widths_v3', ['--synthetic', 'small', '--layers', '1', '--dtype', 'int4'])]:
            path = os.path.join(tmp, name + '.ork')
            subprocess.run([ork_pack] + args + ['-o', path], check=True, capture_output=True)
            data = open(path, 'rb').read()
            put('pack_file', name, data[:struct.unpack_from('<Q', data, 32)[0]])


def pack_file_crashes():
    """Reproducers of the two parse_packed bugs found while writing fuzz_pack_file (both fixed;
    the replay test keeps them fixed), with real checksums, so read_packed would meet them too:
    a data offset of 0 that let a description of 2^64 - 4096 bytes through the unsigned
    difference check (then read past the buffer), and a scale range whose end wraps past 2^64."""
    d = os.path.join(HERE, 'crashes', 'pack_file')
    os.makedirs(d, exist_ok=True)
    h = bytearray(4096)
    h[0:8] = b'ORKPACK\0'
    struct.pack_into('<IIQQQQ', h, 8, 2, 4096, 4096, 2**64 - 4096, 0, 0)
    seal(h)
    open(os.path.join(d, 'description_past_the_buffer'), 'wb').write(bytes(h))
    seed = bytearray(open(os.path.join(HERE, 'corpus', 'pack_file', 'tiny_int8_2_layers'), 'rb').read())
    n = struct.unpack_from('<Q', seed, 24)[0]
    j = json.loads(bytes(seed[4096:4096 + n]))
    j['tensors'][0][4:6] = [2**64 - 4096, 8192]
    text = json.dumps(j, separators=(',', ':')).encode()
    data_offset = struct.unpack_from('<Q', seed, 32)[0]
    assert 4096 + len(text) <= data_offset
    seed[4096:data_offset] = text + bytes(data_offset - 4096 - len(text))
    struct.pack_into('<Q', seed, 24, len(text))
    struct.pack_into('<Q', seed, 48, fnv1a(text))
    seal(seed)
    open(os.path.join(d, 'scale_range_wrapping_past_2_64'), 'wb').write(bytes(seed))


def pack_file_hostile():
    """Hostile heads the reader must refuse by name: a version 1 file (checksums with an FNV-1a
    basis one digit short, 1469598103934665603, which the format's version 2 corrected)."""
    seed = bytearray(open(os.path.join(HERE, 'corpus', 'pack_file', 'tiny_int8_2_layers'), 'rb').read())
    old_basis = 1469598103934665603
    n = struct.unpack_from('<Q', seed, 24)[0]
    struct.pack_into('<I', seed, 8, 1)
    struct.pack_into('<Q', seed, 48, fnv1a(bytes(seed[4096:4096 + n]), old_basis))
    struct.pack_into('<Q', seed, 56, fnv1a(bytes(seed[:56]), old_basis))
    put('pack_file', 'version_1_old_fnv_basis', bytes(seed))


# Model descriptions (docs/execution.md "Model description") and the hostile inputs that
# once crashed or were silently narrowed, kept in the corpora so they stay fixed: nesting
# 100,000 deep (a stack overflow where the description was serialised again), integers past
# 2^32 and fractions (4294967298 layers packed 2, a K of 64.7 became 64, a layer index of 2^32
# became 0, an offset of 8192.5 became 8192).
TINY_DESC = {'name': 'tiny', 'dtype': 'int8', 'hidden': 64, 'layers': 2, 'layout': 'n_by_k',
             'matmuls': [{'name': 'q', 'tensor': 'model.layers.{layer}.q.weight', 'k': 64, 'n': 64,
                          'input': ['x'], 'shift': 9},
                         {'name': 'o', 'tensor': 'model.layers.{layer}.o.weight', 'k': 64, 'n': 64,
                          'input': ['q'], 'after': []}],
             'output': ['x', 'o']}
NESTED = '[' * 100000 + ']' * 100000


def hostile_inputs():
    mm = TINY_DESC['matmuls']
    put('desc', 'tiny', json.dumps(TINY_DESC))
    put('desc', 'nested_100k', NESTED)
    put('desc', 'layers_past_2_32', json.dumps(dict(TINY_DESC, layers=2**32 + 2)))
    put('desc', 'fractions', json.dumps(dict(TINY_DESC, layers=1.9, matmuls=[dict(mm[0], k=64.7), mm[1]])))
    put('desc', 'shift_past_2_32', json.dumps(dict(TINY_DESC, matmuls=[dict(mm[0], shift=2**32 + 3), mm[1]])))
    base = open(os.path.join(HERE, 'corpus', 'pack_file', 'tiny_int8_2_layers'), 'rb').read()
    j = json.loads(base[4096:4096 + struct.unpack_from('<Q', base, 24)[0]])
    for name, change in [('layer_index_2_32', lambda t: t[0].__setitem__(0, 2**32)),
                         ('fractional_offset', lambda t: t[1].__setitem__(2, t[1][2] + 0.5)),
                         ('negative_bytes', lambda t: t[2].__setitem__(3, -4096))]:
        k = json.loads(json.dumps(j))
        change(k['tensors'])
        put('pack_file', name, packed_head(json.dumps(k, separators=(',', ':')).encode()))
    d = os.path.join(HERE, 'crashes', 'pack_file')
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, 'description_nested_100k'), 'wb').write(
        packed_head(('{"model":%s,"tensors":[]}' % NESTED).encode()))
    put('safetensors', 'nested_shape_100k', safetensors_raw(
        '{"a":{"dtype":"U8","shape":%s,"data_offsets":[0,1]}}' % NESTED, 1))
    put('safetensors', 'fractional_offsets', safetensors_raw(
        '{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4.0]},"b":{"dtype":"U8","shape":[1],'
        '"data_offsets":[4,4294967301]}}', 5))


def safetensors_raw(header, data_bytes):
    h = header.encode()
    h += b' ' * (-len(h) % 8)
    return struct.pack('<Q', len(h)) + h + bytes(data_bytes)


hostile_inputs()


# The two seed sets made by the library and its tools (after a build):
#   fuzz/make_seeds.py build/lib/api/libork.so build/tools/ork_pack/ork_pack
if len(sys.argv) == 3:
    packed_weights_seeds(sys.argv[1])
    pack_file_seeds(sys.argv[2])
    pack_file_crashes()
    pack_file_hostile()
