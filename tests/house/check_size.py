#!/usr/bin/env python3
"""The size rules of the project's style (docs/README.md, "Conventions"): no source file
under driver/, lib/, tools/, include/, examples/, tests/, tests-hw/ or fuzz/ over 450 lines,
and no C or C++ function there over 60 lines (a GoogleTest TEST, TEST_F or TEST_P body is a
function, named by its suite and test). Fails naming each file that is over, with its line count, and each
function that is over, with its file:line, name and length.

A function is found by brace depth, whatever its indent: with comments, string and
character literals and preprocessor lines left out, each '{' is classified by the code
before it (since the last ';' or block brace): a parameter list `)` (with its qualifiers,
or a constructor's initializer list) opens a function body, `[captures]` or
`[captures](params)` a lambda's; `if`/`for`/`while`/`switch`/`catch`, `else`/`do`/`try`,
a label, namespace/class/struct/union/enum open blocks, and `= {`, `return {` or `T{` an
initializer. A function runs from the first line of its signature (a lambda from its '{')
to its matching '}'. Member functions defined in their class and lambdas count like any.

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

from house_tree import run, write_tree, tally

MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60
TREES = ("driver", "lib", "tools", "include", "examples", "tests", "tests-hw", "fuzz")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".py")
C_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")
CONTROL = {"if", "constexpr", "for", "while", "switch", "catch", "sizeof", "alignof", "decltype", "return",
           "noexcept", "static_assert", "requires"}
BLOCK_HEADS = re.compile(r"^(?:template\s*<[^{]*>\s*)?(?:namespace|class|struct|union|enum)\b")
ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
QUALIFIERS = re.compile(r"(?:\s*(?:const|volatile|noexcept\s*(?:\([^()]*\))?|override|final|mutable|constexpr|&&|&"
                        r"|->\s*[\w:<>,\s*&]+|requires\b[^{;]*))*\s*$")
CTOR_INIT = re.compile(r"\)\s*(?:noexcept\s*)?:\s*[\w:]+\s*[({]")
GTEST_MACROS = ("TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P")
NAME = re.compile(r"((?<![\w:])[\w:]*operator\s*(?:\(\)|[^\s\w(]{1,3})|~?[A-Za-z_][\w:~]*)\s*\(")


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


def code_only(text):
    """`text` with comments, string and character literals and preprocessor lines blanked
    (newlines kept, so offsets keep their line)."""
    out, i, n = list(text), 0, len(text)

    def blank(a, b):
        for j in range(a, b):
            if out[j] != "\n":
                out[j] = " "
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" :  # a preprocessor line, with its continuations
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            blank(i, j)
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            delim = text[i + 2:k]
            j = text.find(")" + delim + '"', k)
            j = n if j < 0 else j + len(delim) + 2
            blank(i, j)
            i = j
        elif c == '"' or (c == "'" and not digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def digit_separator(text, i):
    """True when the quote at i separates digits (1'000), not a character literal."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_'"):
        j -= 1
    return j < i and text[j].isdigit()


def matching_open(head, close):
    """Index of the '(' that the ')' at `close` closes, or -1."""
    depth = 0
    for j in range(close, -1, -1):
        if head[j] == ")":
            depth += 1
        elif head[j] == "(":
            depth -= 1
            if depth == 0:
                return j
    return -1


def body_kind(head):
    """What the '{' after `head` (the code since the last ';' or block brace) opens:
    "function", "lambda", "block" (namespace, class, control statement, compound
    statement) or "brace" (an initializer: `= {`, `T{...}`, `return {...}`)."""
    h = ACCESS.sub("", head).strip()
    if not h or h in ("else", "do", "try") or h.endswith(":") or re.search(r"\belse$", h):
        return "block"
    if BLOCK_HEADS.match(h) or re.fullmatch(r"extern\s*", h):
        return "block"
    if h.endswith("=") or re.search(r"\breturn$", h):
        return "brace"
    if CTOR_INIT.search(h) and h[-1] in ")}":
        return "function"  # a constructor's initializer list
    if re.search(r"\]\s*(?:mutable\s*)?$", h):
        return "lambda"  # `[captures] {` (an array's `x[] = {` ends in '=')
    q = QUALIFIERS.search(h)
    core = h[:q.start()] if q else h
    if not core.endswith(")"):
        return "brace"
    open_at = matching_open(core, len(core) - 1)
    before = core[:open_at].rstrip() if open_at >= 0 else ""
    if before.endswith("]"):
        return "lambda"  # `[captures](params) {`
    if re.search(r"operator\s*(?:\(\)|[^\s\w(]{1,3})$", before):
        return "function"
    word = re.search(r"([A-Za-z_]\w*)\s*$", before)
    if not word or word.group(1) in CONTROL:
        return "block"
    return "function"


def function_name(head):
    """The name a failure gives the function whose signature is `head`: its name, or for a
    GoogleTest body the macro with its suite and test, `TEST_P(Async, Replays)`."""
    h = ACCESS.sub("", head)
    name = NAME.search(h)
    if not name:
        return "lambda"
    if name.group(1) in GTEST_MACROS:
        close = h.find(")", name.end())
        if close > 0:
            return name.group(1) + "(" + " ".join(h[name.end():close].split()) + ")"
    return name.group(1)


def long_functions(lines):
    """(line, length, name) of each function body over MAX_FUNCTION_LINES lines: functions
    at namespace scope, member functions defined in their class and lambdas, found by
    brace depth (comments, literals and preprocessor lines left out)."""
    code = code_only("\n".join(lines))
    line_of = [0] * (len(code) + 1)
    number = 1
    for i, c in enumerate(code):
        line_of[i] = number
        if c == "\n":
            number += 1
    line_of[len(code)] = number
    found, stack, boundary = [], [], 0
    for i, c in enumerate(code):
        if c == ";":
            boundary = i + 1
        elif c == "{":
            head = code[boundary:i]
            kind = body_kind(head)
            if kind in ("function", "lambda"):
                start = boundary + len(head) - len(head.lstrip())
                access = ACCESS.match(head.lstrip())
                start = i if kind == "lambda" else start + (len(access.group(0)) if access else 0)
                stack.append((kind, line_of[start], function_name(head) if kind == "function" else "lambda"))
            else:
                stack.append((kind, 0, ""))
            if kind != "brace":
                boundary = i + 1
        elif c == "}" and stack:
            kind, first, name = stack.pop()
            if kind in ("function", "lambda"):
                length = line_of[i] - first + 1
                if length > MAX_FUNCTION_LINES:
                    found.append((first, length, name))
            if kind != "brace":
                boundary = i + 1
    return sorted(found)


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
        # By brace depth: members defined in their class, lambdas, whatever the indent.
        ("lib/a/member.h", src(["class A {", " public:"], ["  " + l for l in function("member", 61)], ["};"]),
         "lib/a/member.h:3: member: a function of 61 lines"),
        ("lib/a/member60.h", src(["class A {", " public:"], ["  " + l for l in function("member", 60)], ["};"]),
         None),
        ("lib/a/lambda.cpp", src(["// a lambda at namespace scope", "auto f = [](int a) {"], ["  a += 1;"] * 59,
                                 ["};"]),
         "lib/a/lambda.cpp:2: lambda: a function of 61 lines"),
        ("lib/a/operator.cpp", src(["struct F {", "  int operator()(int a) const {"], ["    a += 1;"] * 59,
                                   ["  }", "};"]),
         "lib/a/operator.cpp:2: operator(): a function of 61 lines"),
        ("lib/a/ctor_init.cpp", src(["Foo::Foo(int a)", "    : a_(a), b_{a} {"], ["  a += 1;"] * 58, ["}"]),
         "lib/a/ctor_init.cpp:1: Foo::Foo: a function of 61 lines"),
        # GoogleTest bodies are functions, named by suite and test.
        ("tests/t/gtest.cpp", src(["TEST_P(Suite, Name) {"], ["  EXPECT_EQ(1, 1);"] * 59, ["}"]),
         "tests/t/gtest.cpp:1: TEST_P(Suite, Name): a function of 61 lines"),
        ("tests/t/gtest60.cpp", src(["TEST(Suite,", "     Name) {"], ["  EXPECT_EQ(1, 1);"] * 57, ["}"]), None),
        # Not functions: a long table, a long control block inside a short-enough function
        # (counted once, as the function), braces in literals and comments, a digit separator.
        ("lib/a/table.cpp", src(["const int kTable[] = {"], ["  1,"] * 70, ["};"]), None),
        ("lib/a/nested.cpp", src(function("outer", 30), ["void g() {", "  if (x) {"], ["    y();"] * 56,
                                 ["  }", "}"]), None),
        ("lib/a/literals.cpp", src(["int f() {", '  const char* s = "}}}";  // }', "  char c = '}';",
                                   "  int n = 1'000;", "  /* } */"], ["  n += 1;"] * 55, ["}"]),
         "lib/a/literals.cpp:1: f: a function of 61 lines"),
    ]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(tmp, {rel: text for rel, text, _ in cases})
        for rel, _, expect in cases:
            got = check(tmp, [rel])
            ok = not got if expect is None else len(got) == 1 and expect in got[0]
            if not ok:
                failed += 1
                print(f"self-test {rel}: expected {expect!r}, got {got}")
    return tally(len(cases), failed)


def check_root(root):
    """The check over the tree at root: its report, and 1 when it found a fault."""
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


def main(argv):
    return run(argv, __doc__, self_test, check_root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
