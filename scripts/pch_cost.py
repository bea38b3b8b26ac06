#!/usr/bin/env python3
"""What a precompiled header would buy one target (meson's cpp_pch is per target;
docs/reliability.md "CI time", "Precompiled headers, measured").

Usage: scripts/pch_cost.py BUILD_DIR OBJECT_REGEX HEADER...

For the first object of BUILD_DIR's compile commands (`ninja -t compdb`) whose output matches
OBJECT_REGEX, compiles, each alone and without the compiler cache (CCACHE_DISABLE=1), into a
temp dir removed after: the object as the build does; a header including each HEADER
(<gtest/gtest.h>, ...) precompiled with the object's own flags, as meson's cpp_pch would for
the target; and the object again with that header included first (gcc's -include, which
takes the .gch beside it). Prints the CPU seconds (user + system, getrusage) of each, and the
target's cost both ways: as built, against the precompiled header plus the object using it.
"""
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compile_cost import private_command  # noqa: E402  (the same command rewriting)


def cpu_seconds(argv, cwd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    build_dir, pattern, headers = os.path.abspath(argv[1]), re.compile(argv[2]), argv[3:]
    out = subprocess.run(["ninja", "-C", build_dir, "-t", "compdb"], capture_output=True, text=True,
                         check=True).stdout
    entry = next((e for e in json.loads(out) if e["output"].endswith(".o") and pattern.search(e["output"])), None)
    if entry is None:
        sys.stderr.write(f"pch_cost: no object matches {argv[2]}\n")
        return 2
    env = dict(os.environ, CCACHE_DISABLE="1")
    with tempfile.TemporaryDirectory(prefix="pch_cost.") as tmp:
        obj = os.path.join(tmp, "x.o")
        command = private_command(entry["command"], obj)
        source = shlex.split(entry["command"])[-1]
        header = os.path.join(tmp, "pch.h")
        with open(header, "w", encoding="utf-8") as f:
            f.writelines(f"#include <{h}>\n" for h in headers)
        flags = [a for a in command[:-2] if a not in ("-c", source)]  # the object's flags, no -o
        plain = cpu_seconds(command, entry["directory"], env)
        pch = cpu_seconds(flags + ["-x", "c++-header", header, "-o", header + ".gch"], entry["directory"], env)
        using = cpu_seconds(command[:-2] + ["-include", header, "-Winvalid-pch", "-o", obj],
                            entry["directory"], env)
    print(f"{entry['output']}: as built {plain:.1f} s CPU; precompiled header {pch:.1f} s + object "
          f"using it {using:.1f} s = {pch + using:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
