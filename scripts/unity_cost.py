#!/usr/bin/env python3
"""What a unity file saves: the CPU time of compiling a target's sources one by one against
compiling them as its one unity file (meson option unity_sources; docs/reliability.md
"CI time", levers 17 and 21).

Usage: scripts/unity_cost.py BUILD_DIR [NAME ...]

BUILD_DIR is configured with -Dunity_sources=true and built (the unity files exist). For
each unity object in its compile commands (`ninja -t compdb`) whose file is NAME_unity.cpp
(every one without NAME), compiles the unity file with its own command, then each source it
includes with that same command, each compile alone and without the compiler cache
(CCACHE_DISABLE=1), the objects into a temp dir that is removed after. Prints per target the
sources, the CPU time (user + system, from getrusage) one by one and as one file, then the
totals. CPU time, not wall time: the figure holds on a shared machine (though load inflates
it somewhat too).
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile


def cpu_seconds(command, cwd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=env, shell=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def unity_objects(build_dir, names):
    out = subprocess.run(["ninja", "-C", build_dir, "-t", "compdb"], capture_output=True, text=True,
                         check=True).stdout
    for entry in json.loads(out):
        m = re.search(r"([A-Za-z0-9_]+)_unity\.cpp$", entry["file"])
        if m and entry["output"].endswith(".o") and (not names or m.group(1) in names):
            yield m.group(1), entry


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    build_dir = os.path.abspath(argv[1])
    env = dict(os.environ, CCACHE_DISABLE="1")
    total_alone = total_unity = 0.0
    with tempfile.TemporaryDirectory(prefix="unity_cost.") as tmp:
        obj = os.path.join(tmp, "x.o")
        for name, e in unity_objects(build_dir, set(argv[2:])):
            unity = os.path.join(e["directory"], e["file"])
            with open(unity, encoding="utf-8") as f:
                sources = [os.path.normpath(os.path.join(os.path.dirname(unity), s))
                           for s in re.findall(r'#include "(.*)"', f.read())]
            command = e["command"].replace(e["output"], obj)
            as_one = cpu_seconds(command, e["directory"], env)
            alone = sum(cpu_seconds(command.replace(e["file"], s), e["directory"], env) for s in sources)
            total_alone += alone
            total_unity += as_one
            print(f"{name}: {len(sources)} sources, one by one {alone:.1f} s CPU, as one file {as_one:.1f} s",
                  flush=True)
    print(f"total: one by one {total_alone:.1f} s CPU, as one file {total_unity:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
