#!/usr/bin/env python3
"""ork_matmul --dtype fp16|int4|w4a8 on emu and cpu, checked against Python loops (no numpy
needed): exact integers for int4/w4a8; fp16 inputs 0..9 (every sum exact in any order) for
fp32 and fp16 C, from '<f2' and from '<f4' files; bad combinations exit 2."""
import atexit, os, shutil, struct, subprocess, sys, tempfile

TOOL = sys.argv[1]


def save(path, descr, rows, cols, fmt, vals):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, rows, cols)
    hdr += ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        f.write(struct.pack('<%d%s' % (len(vals), fmt), *vals))


def load(path):
    data = open(path, 'rb').read()
    hl = struct.unpack('<H', data[8:10])[0]
    hdr, body = data[10:10 + hl].decode(), data[10 + hl:]
    fmt = {'<i4': 'i', '<f4': 'f', '<f2': 'e'}[hdr.split("'descr': '")[1][:3]]
    return hdr, list(struct.unpack('<%d%s' % (len(body) // struct.calcsize(fmt), fmt), body))


def plain(a, w, m, k, n):
    return [sum(a[r * k + i] * w[i * n + c] for i in range(k)) for r in range(m) for c in range(n)]


def run(args, want_rc=0):
    r = subprocess.run([TOOL, '-q'] + args, capture_output=True, text=True)
    if r.returncode != want_rc:
        print('FAIL: %s -> %d (want %d): %s' % (' '.join(args), r.returncode, want_rc, r.stderr))
        sys.exit(1)


m, k, n = 5, 70, 33
d = tempfile.mkdtemp()
atexit.register(shutil.rmtree, d, True)  # the scratch directory goes with the run
p = lambda name: os.path.join(d, name)
a4 = [(i * 7 + 3) % 16 - 8 for i in range(m * k)]
w4 = [(i * 5 + 1) % 16 - 8 for i in range(k * n)]
a8 = [(i * 37 + 11) % 256 - 128 for i in range(m * k)]
a9 = [(i * 7 + 3) % 10 for i in range(m * k)]
w9 = [(i * 5 + 1) % 10 for i in range(k * n)]
save(p('a4.npy'), '|i1', m, k, 'b', a4)
save(p('w4.npy'), '|i1', k, n, 'b', w4)
save(p('a8.npy'), '|i1', m, k, 'b', a8)
save(p('a9.npy'), '<f2', m, k, 'e', a9)
save(p('a9f.npy'), '<f4', m, k, 'f', a9)
save(p('w9.npy'), '<f2', k, n, 'e', w9)
for dev in ('emu', 'emu-rocket', 'cpu'):
    run(['--dtype', 'int4', '--a', p('a4.npy'), '--b', p('w4.npy'), '-o', p('c.npy'), '-d', dev])
    assert load(p('c.npy'))[1] == plain(a4, w4, m, k, n), 'int4 ' + dev
    run(['--dtype', 'w4a8', '--a', p('a8.npy'), '--b', p('w4.npy'), '-o', p('c.npy'), '-d', dev])
    assert load(p('c.npy'))[1] == plain(a8, w4, m, k, n), 'w4a8 ' + dev
    for a_file in ('a9.npy', 'a9f.npy'):
        run(['--dtype', 'fp16', '--a', p(a_file), '--b', p('w9.npy'), '-o', p('c.npy'), '-d', dev])
        hdr, c = load(p('c.npy'))
        assert "'<f4'" in hdr and c == [float(x) for x in plain(a9, w9, m, k, n)], 'fp16 ' + dev
    run(['--dtype', 'fp16', '--out-dtype', 'fp16', '--a', p('a9.npy'), '--b', p('w9.npy'), '-o', p('c.npy'), '-d', dev])
    hdr, c = load(p('c.npy'))
    assert "'<f2'" in hdr and c == [float(x) for x in plain(a9, w9, m, k, n)], 'fp16 C ' + dev  # sums < 2048
run(['--dtype', 'int4', '--a', p('a8.npy'), '--b', p('w4.npy'), '-o', p('c.npy'), '-d', 'emu'], 2)  # A out of -8..7
run(['--dtype', 'int8', '--out-dtype', 'fp16', '--a', p('a8.npy'), '--b', p('w4.npy'), '-o', p('c.npy')], 2)
run(['--dtype', 'fp16', '--a', p('a8.npy'), '--b', p('w9.npy'), '-o', p('c.npy'), '-d', 'emu'], 2)  # int8 file
print('ork_matmul dtypes: ok')
