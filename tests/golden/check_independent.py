#!/usr/bin/env python3
"""The golden decoder and comparison must not lean on libork's encoding: none of the given
files may include a libork header (driver/, lib/, include/ork, the generated npu_regs.h),
nor include ork_stream.h other than test_golden.cpp (the one door into the library)."""
import re
import sys

FORBIDDEN = re.compile(r'#\s*include\s*[<"](driver/|lib/|ork/|uapi/|npu_regs\.h|regcmd)')
bad = []
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FORBIDDEN.search(line):
                bad.append(f"{path}:{n}: {line.strip()}")
            if '"ork_stream.h"' in line and not path.endswith("test_golden.cpp"):
                bad.append(f"{path}:{n}: only test_golden.cpp may reach libork")
for b in bad:
    print("not independent:", b)
sys.exit(1 if bad or not sys.argv[1:] else 0)
