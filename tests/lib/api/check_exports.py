#!/usr/bin/env python3
"""The shared libork exports exactly the functions of include/ork/ork.h (a small public API,
enforced: hidden symbols by default, an exported list, a test that checks it).

Usage: check_exports.py LIBORK_SO ORK_H
Exit 0 when the dynamic symbol table's defined functions equal the ORK_API declarations of
the header; 1 (listing the differences) otherwise; 2 on bad usage.
"""
import re
import subprocess
import sys


def declared(header_path):
    text = open(header_path, encoding="utf-8").read()
    return set(re.findall(r"ORK_API\s+[^;(]*?\b(ork_\w+)\s*\(", text))


def exported(so_path):
    out = subprocess.run(["nm", "-D", "--defined-only", so_path], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWwDdBbRrVvi":
            names.add(parts[2].split("@")[0])
    return names


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    want, have = declared(sys.argv[2]), exported(sys.argv[1])
    if len(want) < 9:
        print(f"check_exports: only {len(want)} ORK_API declarations parsed from {sys.argv[2]}")
        return 1
    missing, extra = sorted(want - have), sorted(have - want)
    for name in missing:
        print(f"missing export: {name} (declared ORK_API in ork.h)")
    for name in extra:
        print(f"unexpected export: {name} (not in ork.h: add it to ork.h or hide it)")
    print(f"check_exports: {len(have)} exported, {len(want)} declared")
    return 1 if missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
