#!/usr/bin/env python3
"""Where a build dir's compile CPU goes: each object's compile run alone, without the compiler
cache, its CPU time summed per target (docs/reliability.md "CI time", "Where the compile goes").

Usage: scripts/compile_cost.py BUILD_DIR [REGEX ...]

Reads BUILD_DIR's compile commands (`ninja -t compdb`, so the build dir is configured; the
generated unity files and headers must exist, so it is built) and runs each command whose
object path matches one of the REGEXes (every object without one) with CCACHE_DISABLE=1, the
object and its dependency file written to a temp dir that is removed after, nothing written
into BUILD_DIR. Prints one line per target (the object's folder `NAME.p`): its CPU seconds
(user + system, from getrusage), its objects, then the total, biggest first. CPU time, not
wall time: the figure holds on a shared machine (though load inflates it somewhat too).
"""
import collections
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile


def cpu_seconds(argv, cwd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def private_command(command, obj):
    """The compile command writing its object to obj and no dependency file into the build dir."""
    argv, out, skip = [], [], 0
    for a in shlex.split(command):
        if skip:
            skip -= 1
            continue
        if a in ("-MQ", "-MF", "-MT"):
            skip = 1
            continue
        if a in ("-MD", "-MMD"):
            continue
        if a == "-o":
            skip = 1
            out.append(obj)
            continue
        argv.append(a)
    return argv + ["-o", obj] if out else None


def target_of(output):
    m = re.search(r"([^/]+)\.p/", output)
    return os.path.join(os.path.dirname(output.split(".p/")[0]), m.group(1)) if m else output


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    build_dir = os.path.abspath(argv[1])
    patterns = [re.compile(p) for p in argv[2:]]
    out = subprocess.run(["ninja", "-C", build_dir, "-t", "compdb"], capture_output=True, text=True,
                         check=True).stdout
    env = dict(os.environ, CCACHE_DISABLE="1")
    per_target = collections.defaultdict(lambda: [0.0, 0])
    with tempfile.TemporaryDirectory(prefix="compile_cost.") as tmp:
        obj = os.path.join(tmp, "x.o")
        for e in json.loads(out):
            if not e["output"].endswith(".o") or (patterns and not any(p.search(e["output"]) for p in patterns)):
                continue
            command = private_command(e["command"], obj)
            if command is None:
                continue
            t = target_of(e["output"])
            per_target[t][0] += cpu_seconds(command, e["directory"], env)
            per_target[t][1] += 1
            print(f"  {t}: {per_target[t][0]:.1f} s CPU after {per_target[t][1]} objects", flush=True)
    total = 0.0
    for t, (s, n) in sorted(per_target.items(), key=lambda kv: -kv[1][0]):
        total += s
        print(f"{s:8.1f} s CPU  {n:3d} objects  {t}")
    print(f"{total:8.1f} s CPU  {sum(n for _, n in per_target.values()):3d} objects  total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
