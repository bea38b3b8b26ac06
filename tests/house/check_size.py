#!/usr/bin/env python3
"""The size rule of the project's style (docs/README.md): no source file under driver/, lib/,
tools/, include/ or examples/ over 450 lines. Fails naming each file that is over, with its
line count. Functions over 60 lines (a column-0 heuristic for C and C++) are listed as a
note, not a failure: "short functions" is judged by reading, the file limit is a hard rule.

Usage: check_size.py SOURCE_ROOT. The files are git's tracked ones when SOURCE_ROOT is a git
checkout, otherwise every file found (a release tarball holds only tracked files)."""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60
TREES = ("driver", "lib", "tools", "include", "examples")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".py")
# A function definition's first line at column 0: a name and '(' and no ';' (declarations end
# with one); its body ends at the first later line that is a lone '}' at column 0.
FUNCTION_START = re.compile(r"^[A-Za-z_][^;#]*\(.*$")


def source_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", *TREES],
                             check=True, capture_output=True).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for tree in TREES:
            for dirpath, _, files in os.walk(os.path.join(root, tree)):
                names += [os.path.relpath(os.path.join(dirpath, f), root) for f in files]
    return sorted(n for n in names if n.endswith(SOURCE_SUFFIXES))


def opens_body(lines, i):
    """True when the signature starting at line i opens a body ('{') before any ';'."""
    for line in lines[i:i + 8]:
        code = line.split("//")[0]
        if ";" in code and ("{" not in code or code.index(";") < code.index("{")):
            return False
        if code.rstrip().endswith("{"):
            return True
    return False


def long_functions(lines):
    found, i = [], 0
    while i < len(lines):
        line = lines[i]
        if (FUNCTION_START.match(line) and not line.startswith(("namespace", "struct", "class", "extern"))
                and opens_body(lines, i)):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "}"), len(lines) - 1)
            if end - i + 1 > MAX_FUNCTION_LINES:
                found.append((i + 1, end - i + 1, line.strip()))
            i = end
        i += 1
    return found


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    files = source_files(root)
    if not files:
        print(f"no source files under {root}: wrong source root?")
        return 1
    over, notes = [], []
    for name in files:
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            continue  # deleted in the work tree, still in git's index
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        count = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
        if count > MAX_FILE_LINES:
            over.append((name, count))
        if name.endswith((".c", ".cc", ".cpp", ".h", ".hpp")):
            notes += [(name, *fn) for fn in long_functions(lines)]
    for name, line, length, head in notes:
        print(f"note: {name}:{line}: a function of {length} lines (over {MAX_FUNCTION_LINES}): {head}")
    for name, count in over:
        print(f"FAIL: {name}: {count} lines, over the limit of {MAX_FILE_LINES}: split it where a reader "
              "would look for two things")
    print(f"{len(files)} source files checked, {len(over)} over {MAX_FILE_LINES} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
