#!/usr/bin/env python3
"""Every JSON the project reads goes through the one bounded reader: outside
driver/common/json.h (parse_json_bounded: nesting bounded before anything recurses) no
source under driver/, lib/, tools/, fuzz/ or examples/ calls nlohmann's parser
(`json::parse(`, `json::accept(`) or reads a JSON number into an integer with `get<T>()`
for an integer T: json_int / json_int_value read them whole and in range
(docs/reliability.md "Hostile input"). A SAX pass over text the bounded reader already
accepted (`json::sax_parse`) stays allowed. Tests may parse what the tools print.

Usage: check_json.py SOURCE_ROOT    exit 0, or 1 with file:line of each call
       check_json.py --self-test    small trees with one fault each (and clean look-alikes):
                                    the check must report the faults, and only them"""
import os
import re
import sys
import tempfile

from house_tree import run, tally, write_tree

TREES = ("driver", "lib", "tools", "fuzz", "examples")
SUFFIXES = (".cpp", ".cc", ".h", ".hpp")
HELPER = "driver/common/json.h"
PARSE = re.compile(r"\bjson::(parse|accept)\s*\(")
INTEGER = re.compile(r"\.get<\s*(?:std::)?(?:u?int(?:8|16|32|64)_t|int|long|unsigned|size_t|short)\b[^>]*>\s*\(")


def check(root):
    failures, scanned = [], 0
    for tree in TREES:
        for dirpath, dirs, files in os.walk(os.path.join(root, tree)):
            dirs[:] = [d for d in dirs if d not in ("corpus", "crashes")]
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if not name.endswith(SUFFIXES) or rel == HELPER:
                    continue
                scanned += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        code = line.split("//", 1)[0]
                        if PARSE.search(code):
                            failures.append(f"{rel}:{n}: JSON parsed outside {HELPER}: use parse_json_bounded")
                        if INTEGER.search(code) and "json" in open(path, encoding="utf-8", errors="replace").read():
                            failures.append(f"{rel}:{n}: a JSON number read with get<integer>(): use json_int")
    return failures, scanned


SELF_TEST_CASES = [
    ("parse in lib", "lib/x/a.cpp", "auto j = nlohmann::json::parse(text);\n", "JSON parsed outside"),
    ("accept in tools", "tools/t/b.cpp", "if (json::accept(s)) {}\n", "JSON parsed outside"),
    ("integer get", "lib/x/c.cpp", "#include <nlohmann/json.hpp>\nint k = j.at(\"k\").get<int64_t>();\n",
     "get<integer>()"),
    ("the helper itself", "driver/common/json.h", "return nlohmann::json::parse(text);\n", None),
    ("a comment", "lib/x/d.cpp", "// json::parse( is not called here\n", None),
    ("sax pass", "lib/x/e.cpp", "json::sax_parse(b, e, &keys);\n", None),
    ("double get", "lib/x/f.cpp", "#include <nlohmann/json.hpp>\ndouble d = j.get<double>();\n", None),
    ("a test", "tests/x/g.cpp", "auto j = nlohmann::json::parse(out);\n", None),
]


def self_test():
    failed = 0
    for what, rel, text, expect in SELF_TEST_CASES:
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, {"lib/ok/ok.cpp": "int x;\n", rel: text})
            got, _ = check(tmp)
        ok = not got if expect is None else any(expect in g for g in got) and all(g.startswith(rel) for g in got)
        if not ok:
            failed += 1
            print(f"self-test '{what}': expected {expect!r}, got {got}")
    return tally(len(SELF_TEST_CASES), failed)


def check_root(root):
    failures, scanned = check(os.path.abspath(root))
    for failure in failures:
        print(failure)
    print(f"{scanned} sources checked, {len(failures)} JSON reads outside the bounded reader")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv, __doc__, self_test, check_root))
