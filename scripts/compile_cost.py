#!/usr/bin/env python3
"""Where a build dir's compile CPU goes: each object's compile run alone, without the compiler
cache, its CPU time summed per target (docs/reliability.md "CI time", "Where the compile goes").

Usage: scripts/compile_cost.py BUILD_DIR [--variant NAME:FROM=TO[,FROM=TO...]]... [REGEX ...]

Reads BUILD_DIR's compile commands (`ninja -t compdb`, so the build dir is configured; the
generated unity files and headers must exist, so it is built) and runs each command whose
object path matches one of the REGEXes (every object without one) with CCACHE_DISABLE=1, the
object and its dependency file written to a temp dir that is removed after, nothing written
into BUILD_DIR. Prints one line per target (the object's folder `NAME.p`): its CPU seconds
(user + system, from getrusage), its objects, then the total, biggest first. CPU time, not
wall time: the figure holds on a shared machine (though load inflates it somewhat too).

--variant NAME:FROM=TO,... also compiles each object with its command changed: every argument
equal to FROM replaced by TO (an empty TO drops it), e.g. `--variant g0:-g=-g0` for no debug
info, `--variant O1:-O2=-O1`. The command as built and each variant run one after the other
for each object (their order turned with each object), so every variant sees the same load;
the figures are then one column per variant, with its ratio to the command as built.
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


def parse_variant(spec):
    """'NAME:FROM=TO,...' -> (NAME, {FROM: TO})."""
    name, _, subs = spec.partition(":")
    pairs = [kv.split("=", 1) for kv in subs.split(",") if kv]
    if not name or not pairs or any(len(kv) != 2 or not kv[0] for kv in pairs):
        raise SystemExit(f"compile_cost.py: bad --variant {spec!r} (NAME:FROM=TO[,FROM=TO...])")
    return name, dict(pairs)


def substituted(argv, subs):
    return [subs.get(a, a) for a in argv if subs.get(a, a) != ""]


def target_of(output):
    m = re.search(r"([^/]+)\.p/", output)
    return os.path.join(os.path.dirname(output.split(".p/")[0]), m.group(1)) if m else output


def main(argv):
    args, variants = [], [("as built", {})]
    it = iter(argv[1:])
    for a in it:
        if a == "--variant":
            variants.append(parse_variant(next(it, "")))
        elif a.startswith("--variant="):
            variants.append(parse_variant(a[len("--variant="):]))
        else:
            args.append(a)
    if not args:
        sys.stderr.write(__doc__)
        return 2
    build_dir = os.path.abspath(args[0])
    patterns = [re.compile(p) for p in args[1:]]
    out = subprocess.run(["ninja", "-C", build_dir, "-t", "compdb"], capture_output=True, text=True,
                         check=True).stdout
    env = dict(os.environ, CCACHE_DISABLE="1")
    per_target = collections.defaultdict(lambda: [[0.0] * len(variants), 0])
    with tempfile.TemporaryDirectory(prefix="compile_cost.") as tmp:
        obj = os.path.join(tmp, "x.o")
        for e in json.loads(out):
            if not e["output"].endswith(".o") or (patterns and not any(p.search(e["output"]) for p in patterns)):
                continue
            command = private_command(e["command"], obj)
            if command is None:
                continue
            t = target_of(e["output"])
            n = per_target[t][1]
            for i in [(n + k) % len(variants) for k in range(len(variants))]:
                per_target[t][0][i] += cpu_seconds(substituted(command, variants[i][1]), e["directory"], env)
            per_target[t][1] += 1
            print(f"  {t}: {cpu_columns(per_target[t][0])} s CPU after {n + 1} objects", flush=True)
    totals = [0.0] * len(variants)
    print("variants: " + " | ".join(name for name, _ in variants))
    for t, (s, n) in sorted(per_target.items(), key=lambda kv: -kv[1][0][0]):
        totals = [a + b for a, b in zip(totals, s)]
        print(f"{cpu_columns(s)} s CPU  {n:3d} objects  {t}")
    print(f"{cpu_columns(totals)} s CPU  {sum(n for _, n in per_target.values()):3d} objects  total")
    for (name, _), s in zip(variants[1:], totals[1:]):
        print(f"{name}: {s / totals[0]:.3f} of the command as built" if totals[0] else name)
    return 0


def cpu_columns(seconds):
    return " | ".join(f"{s:8.1f}" for s in seconds)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
