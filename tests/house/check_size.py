#!/usr/bin/env python3
"""The size rules of the project's style (docs/README.md, "Conventions"): no source file
under driver/, lib/, tools/, include/ or examples/ over 450 lines, and no C or C++ function
there over 60 lines. Fails naming each file that is over, with its line count, and each
function that is over, with its file:line, name and length.

A function is found by a column-0 heuristic (the project's style: namespaces are not
indented): a line at column 0 with a name and '(' whose signature opens a body '{' before
any ';' starts one, and the first later line that is a lone '}' at column 0 ends it; the
length counts both. A signature whose braces close on the same line (`{}`, a one-line body)
and an initializer (`= {`) are not bodies. Member functions defined inside a class body
are indented and not measured.

Usage: check_size.py SOURCE_ROOT      exit 0, or 1 with one line per file or function over.
                                      The files are git's tracked ones when SOURCE_ROOT is a
                                      git checkout, otherwise every file found (a release
                                      tarball holds only tracked files)
       check_size.py --self-test      small files at and over each limit: those over, and
                                      only those, must be reported (the check can fail)
"""
import os
import re
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60
TREES = ("driver", "lib", "tools", "include", "examples")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".py")
C_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")
# A function definition's first line at column 0: a name and '(' and no ';' before it.
FUNCTION_START = re.compile(r"^[A-Za-z_][^;#]*\(.*$")
NOT_FUNCTIONS = ("namespace", "struct", "class", "extern", "union", "enum")
NAME = re.compile(r"([A-Za-z_~][\w:~]*)\s*\(")
LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
BALANCED = re.compile(r"\{[^{}]*\}")
SIGNATURE_LINES = 8  # how far a signature may run before its '{'


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
    """True when the signature starting at line i opens a multi-line body before any ';'."""
    for line in lines[i:i + SIGNATURE_LINES]:
        code = LITERAL.sub('""', line.split("//")[0])
        # Braces that close on the line ({} default arguments, a_{1} initializers, a one-line
        # body) open nothing: left out, innermost first.
        open_code = code
        while BALANCED.search(open_code):
            open_code = BALANCED.sub("", open_code)
        brace, semi = open_code.find("{"), open_code.find(";")
        if semi >= 0 and (brace < 0 or semi < brace):
            return False  # a declaration, or a statement at file scope
        if brace >= 0:
            return not open_code[:brace].rstrip().endswith("=")  # `= {`: a table, not a body
        if "{" in code:
            return False  # `{}` or a one-line body
    return False


def long_functions(lines):
    """(line, length, name) of each column-0 function over MAX_FUNCTION_LINES lines."""
    found, i = [], 0
    while i < len(lines):
        line = lines[i]
        if FUNCTION_START.match(line) and not line.startswith(NOT_FUNCTIONS) and opens_body(lines, i):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "}"), len(lines) - 1)
            if end - i + 1 > MAX_FUNCTION_LINES:
                name = NAME.search(line)
                found.append((i + 1, end - i + 1, name.group(1) if name else line.strip()))
            i = end
        i += 1
    return found


def check(root, names):
    """The failure lines for the files `names` (relative to root)."""
    failures = []
    for name in names:
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            continue  # deleted in the work tree, still in git's index
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        count = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
        if count > MAX_FILE_LINES:
            failures.append(f"FAIL: {name}: {count} lines, over the limit of {MAX_FILE_LINES}: split it "
                            "where a reader would look for two things")
        if name.endswith(C_SUFFIXES):
            for line, length, fn in long_functions(lines):
                failures.append(f"FAIL: {name}:{line}: {fn}: a function of {length} lines, over the limit of "
                                f"{MAX_FUNCTION_LINES}: split it where a reader would look for two things")
    return failures


def function(name, total, signature_lines=1):
    """A C++ function of `total` lines: its signature, a body, the closing brace."""
    if signature_lines == 1:
        sig = [f"int {name}(int a) {{"]
    else:
        sig = [f"int {name}(int a,"] + ["        int b,"] * (signature_lines - 2) + ["        int c) {"]
    return sig + ["  a += 1;"] * (total - len(sig) - 1) + ["}"]


def self_test():
    def src(*parts):
        return "\n".join(line for part in parts for line in part) + "\n"
    one_liner = ["int tiny() { return 1; }"]
    ctor = ["Foo::Foo(int a)", "    : a_(a) {}"]
    table = ["const Pair kTable[] = {  // (a, b)", "  {1, 2},", "};"]
    decl = ["int declared(int a);"]
    default_arg = ["int defaulted(int a,", "              Point p = {}) {"]
    cases = [  # (file, text, the failure expected, or None)
        ("lib/a/sixty.cpp", src(function("sixty", 60)), None),
        ("lib/a/sixty_one.cpp", src(function("sixty_one", 61)),
         "lib/a/sixty_one.cpp:1: sixty_one: a function of 61 lines, over the limit of 60"),
        ("tools/t/signature.cpp", src(function("wrapped", 61, signature_lines=3)),
         "tools/t/signature.cpp:1: wrapped: a function of 61 lines"),
        ("tools/t/signature60.cpp", src(function("wrapped", 60, signature_lines=3)), None),
        ("driver/d/one_liner.cpp", src(one_liner, function("after", 60)), None),
        ("driver/d/ctor.cpp", src(ctor, function("after", 60)), None),
        ("driver/d/ctor61.cpp", src(ctor, [""], function("named", 61)),
         "driver/d/ctor61.cpp:4: named: a function of 61 lines"),
        ("include/i/table.h", src(table, decl, function("after", 60)), None),
        ("lib/a/default_arg.cpp", src(default_arg, ["  a += 1;"] * 58, ["}"]),
         "lib/a/default_arg.cpp:1: defaulted: a function of 61 lines"),
        ("examples/e/two.c", src(function("first", 30), [""], function("second", 61)),
         "examples/e/two.c:32: second: a function of 61 lines"),
        ("lib/a/file450.cpp", src(*[function(f"f{k}", 45) for k in range(10)]), None),
        ("lib/a/file451.cpp", src(*[function(f"f{k}", 45) for k in range(10)], ["// one more"]),
         "lib/a/file451.cpp: 451 lines, over the limit of 450"),
        ("lib/a/script.py", src(["x = 1"] * 70), None),  # function lengths: C and C++ only
    ]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text, _ in cases:
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(text)
        for rel, _, expect in cases:
            got = check(tmp, [rel])
            ok = not got if expect is None else len(got) == 1 and expect in got[0]
            if not ok:
                failed += 1
                print(f"self-test {rel}: expected {expect!r}, got {got}")
    print(f"self-test: {len(cases) - failed} of {len(cases)} cases right")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    files = source_files(root)
    if not files:
        print(f"no source files under {root}: wrong source root?")
        return 1
    failures = check(root, files)
    for f in failures:
        print(f)
    print(f"{len(files)} source files checked: {len(failures)} over {MAX_FILE_LINES} lines a file or "
          f"{MAX_FUNCTION_LINES} lines a function")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
