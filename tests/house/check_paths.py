#!/usr/bin/env python3
"""Every repository path a tracked text file writes exists in the tree, so that a file moved
or removed cannot leave a stale reference behind in docs/, comments, scripts or CI.

A path is a token starting with one of the tree's top folders (driver/ lib/ tools/ tests/
tests-hw/ include/ docs/ scripts/ examples/ fuzz/ .ci/), not preceded by a word character,
a slash, a dot, a dash or a colon (so URLs, other repositories' `src/...` paths and their
`owner/repo:path` citations are left alone).
Forms it understands:
  lib/api/buffer.{h,cpp}    brace alternatives: each one must exist
  tests/lib/*  lib/api/*.cpp  globs: at least one tracked path must match
  driver/os/ioctl.cpp:42    `path:line` (the colon ends the token)
  lib/io/read_plan.h/.cpp   a header and its source
  lib/sched/parse           a unit: its .h, .cpp, .c or .py exists
  (docs/io.md).  docs/io.md,  trailing punctuation is not part of the path
  tests/lib/io/io_loader    a build output: a name the folder's meson.build defines (a quoted
                            string there, or two or three of them concatenated, as in
                            'driver_' + name; lib<name>.so), e.g. a target in .ci/sanitizers
  build-*/tests/lib/io/...  a path under a build directory: checked as a build output
A line holding `check_paths: not a path` is skipped (a path of another repository that
happens to start like one of ours).

Skipped: the fuzz corpora and crash inputs (fuzz/corpus/, fuzz/crashes/), binary files,
the house checks themselves (their self-tests write fictional trees), and the paths of
other projects listed in NOT_OURS.

Usage: check_paths.py SOURCE_ROOT      exit 0, or 1 with one line per stale reference
       check_paths.py --self-test      a temporary tree with known good and broken
                                       references: the broken ones, and only those, must be
                                       reported (the check can fail)
"""
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

from house_tree import run, write_tree

TOPS = ("driver", "lib", "tools", "tests-hw", "tests", "include", "docs", "scripts",
        "examples", "fuzz", ".ci")
SKIP_UNDER = ("fuzz/corpus/", "fuzz/crashes/")
# The house checks' self-tests write small fictional trees (tools/t/main.cpp, ...).
SKIP_FILES = re.compile(r"tests/house/check_\w+\.py$")
# Paths of other projects that the docs and comments cite without the `owner/repo:path`
# form (which is skipped, as check_citations.py does), written in that form here, and board
# tests the docs name as proposed. A new citation of another project's path is written
# `owner/repo:path`, goes here, or gets the line marker below.
NOT_OURS = {entry.partition(":")[2] for entry in (
    "mtx512/rk3588-npu:include/rknpu-ioctl.h",
    "mtx512/rk3588-npu:include/npu_hw.h",            # also gregordinary/rocket-userspace's
    "rockchip-linux/kernel:include/rknpu_ioctl.h",   # the vendor driver's own header
    "torvalds/linux:include/uapi/drm/rocket_accel.h",
    "torvalds/linux:include/uapi/drm/drm.h",
    "torvalds/linux:include/uapi/linux/dma-buf.h",
    "torvalds/linux:include/uapi/linux/fs.h",
    "torvalds/linux:include/uapi/linux/major.h",
    "torvalds/linux:include/uapi/asm-generic/ioctl.h",
    "torvalds/linux:include/drm/drm_accel.h",
    "ankit1057/sipllm:include/llm/loader.h",
    "ankit1057/sipllm:include/llm/file_backing.h",
    "oRKLLM/ork-driver:tools/mc_prof.c",
    "proposed (docs/emulator.md):tests-hw/test_int4_saturation",
    "proposed (docs/emulator.md):tests-hw/test_fullk_limit",
)}
OPT_OUT = "check_paths: not a path"
START_RE = re.compile(r"(?<![\w./\-@~$:])(?P<build>build[\w*\-]*/)?(?P<top>" +
                      "|".join(re.escape(t) for t in TOPS) + r")/")
PATH_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/*?+")
QUOTED_RE = re.compile(r"'([^'\n]*)'")


def tracked_files(root):
    """The tracked files (git ls-files), or every file when the tree is not a git checkout."""
    if os.path.exists(os.path.join(root, ".git")):
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        return sorted(p for p in out.split("\0") if p and os.path.isfile(os.path.join(root, p)))
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not d.startswith("build"))
        for f in filenames:
            files.append(os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/"))
    return sorted(files)


def read_text(path):
    """The file's text, or None for a binary file (a NUL byte, or not UTF-8)."""
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def scan_token(line, start):
    """The path token from `start`: path characters, with commas only inside braces."""
    depth, i = 0, start
    while i < len(line):
        ch = line[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth > 0:
            pass
        elif ch not in PATH_CHARS:
            break
        i += 1
    token = line[start:i]
    if depth:  # an unclosed brace: the path ends before it
        token = token[:token.index("{")]
    return token.rstrip(".-+")


def expand_braces(token):
    pair = re.fullmatch(r"(.*)\.(\w+)/\.(\w+)", token)  # lib/io/log.h/.cpp
    if pair:
        return [f"{pair.group(1)}.{pair.group(2)}", f"{pair.group(1)}.{pair.group(3)}"]
    m = re.search(r"\{([^{}]*)\}", token)
    if not m:
        return [token]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(token[:m.start()] + alt + token[m.end():])
    return out


class Tree:
    def __init__(self, root, files):
        self.root = root
        self.files = set(files)
        self.dirs = set()
        for f in files:
            parts = f.split("/")
            for n in range(1, len(parts)):
                self.dirs.add("/".join(parts[:n]))
        self.paths = sorted(self.files | self.dirs)
        self._outputs = {}

    def words(self, folder):
        """The quoted strings of a folder's meson.build (no '/', under 80 characters)."""
        if folder not in self._outputs:
            words = set()
            meson = folder + "/meson.build"
            if meson in self.files:
                with open(os.path.join(self.root, meson), encoding="utf-8") as f:
                    words = {w for w in QUOTED_RE.findall(f.read()) if "/" not in w and len(w) < 80}
            self._outputs[folder] = words
        return self._outputs[folder]

    def is_output(self, folder, name):
        """Whether a folder's meson.build can give an output this name: one of its quoted
        strings, lib<string>.so or .a, or two or three of them concatenated ('driver_' + name,
        'e2e_' + name + '_test'). The name is split rather than every concatenation listed:
        a table of a few hundred strings (tests/meson.build's test groups) made that cubic."""
        words = self.words(folder)
        if name in words:
            return True
        for ext in (".so", ".a"):
            if name.startswith("lib") and name.endswith(ext) and name[3:-len(ext)] in words:
                return True
        for i in range(1, len(name)):
            if name[:i] not in words:
                continue
            rest = name[i:]
            if rest in words or any(rest[:j] in words and rest[j:] in words for j in range(1, len(rest))):
                return True
        return False

    def exists(self, path, build=False):
        path = path.rstrip("/")
        if any(ch in path for ch in "*?"):
            return any(fnmatch.fnmatchcase(p, path) for p in self.paths)
        if path in self.files or path in self.dirs or path in NOT_OURS:
            return True
        if any(path + ext in self.files for ext in (".h", ".cpp", ".c", ".py")):
            return True
        folder, _, name = path.rpartition("/")
        if folder in self.dirs and self.is_output(folder, name):
            return True
        if build:  # meson's own folders under a target's folder: <folder>/<target>.p/...
            parts = path.split("/")
            for n in range(1, len(parts)):
                if parts[n].endswith(".p") and "/".join(parts[:n]) in self.dirs:
                    return True
        return False


def stale_references(root):
    files = tracked_files(root)
    tree = Tree(root, files)
    problems, checked = [], 0
    for rel in files:
        if rel.startswith(SKIP_UNDER) or SKIP_FILES.match(rel):
            continue
        text = read_text(os.path.join(root, rel))
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OPT_OUT in line:
                continue
            for m in START_RE.finditer(line):
                token = scan_token(line, m.start("top"))
                if token.rstrip("/") in TOPS:
                    continue  # the folder itself, e.g. "tests/" in prose
                for path in expand_braces(token):
                    checked += 1
                    if not tree.exists(path, build=bool(m.group("build"))):
                        problems.append(f"{rel}:{number}: '{path}' does not exist in the tree")
    return problems, checked


def self_test():
    # Paths of the temporary tree are joined from parts, so that this file names no path the
    # real tree lacks (the check runs over this file too).
    def p(*parts):
        return "/".join(parts)
    good = {
        p("lib", "api", "buffer.h"): "", p("lib", "api", "buffer.cpp"): "",
        p("tests", "lib", "io", "loader_test.cpp"): "",
        p("tests", "lib", "io", "meson.build"): "io_tests = {'io_loader' : 'loader_test.cpp'}\n"
                                                "executable('driver_' + name)\n",
    }
    guide, corpus, binary = p("docs", "guide.txt"), p("fuzz", "corpus", "npy", "seed"), p("docs", "fig.bin")
    gone = p("lib", "api", "gone.h")
    docs = "\n".join([
        "The buffer: " + p("lib", "api", "buffer.{h,cpp}") + ", and (" + p("lib", "api", "buffer.h") + ").",
        "See " + p("lib", "api", "buffer.cpp") + ":12 and " + p("tests", "lib", "io", "loader_test.cpp") +
        ":3-9; all of " + p("tests", "lib", "*") + ".",
        "Globs: " + p("lib", "api", "*.cpp") + "; the targets " + p("tests", "lib", "io", "io_loader") +
        " and " + p("tests", "lib", "io", "driver_io_loader") + ";",
        "under a build dir: " + p("build-asan", "tests", "lib", "io", "io_loader") +
        ". URLs: " + p("https:", "", "x.org", "lib", "none.h") + ".",
        "Another repository's " + p("src", "lib", "none.h") + ", " + p("owner", "repo:lib", "none.h") +
        "; placeholders: " + p("tests", "lib", "<folder>", ""),
        "A header and its source: " + p("lib", "api", "buffer.h/.cpp") + "; a unit: " + p("lib", "api", "buffer") + ".",
        "A stale one: " + gone + ".",
        "A stale alternative: " + p("lib", "api", "buffer.{h,hpp}") + ".",
        p("lib", "none.h") + " is theirs  # " + OPT_OUT,
    ]) + "\n"
    want = {f"{guide}:7: '{gone}' does not exist in the tree",
            f"{guide}:8: '{p('lib', 'api', 'buffer.hpp')}' does not exist in the tree"}
    with tempfile.TemporaryDirectory() as root:
        write_tree(root, {**good, guide: docs, corpus: p("lib", "none.h") + "\n"})
        with open(os.path.join(root, binary), "wb") as f:
            f.write(b"\0\1" + p("lib", "none.h").encode() + b"\n")
        got = set(stale_references(root)[0])
    if got != want:
        print("check_paths self-test failed:")
        for line in sorted(want - got):
            print("  not reported:", line)
        for line in sorted(got - want):
            print("  reported wrongly:", line)
        return 1
    print(f"check_paths self-test: {len(want)} stale references reported, nothing else")
    return 0


def check_root(root):
    """The check over the tree at root: its report, and 1 when it found a fault."""
    problems, checked = stale_references(root)
    for p in problems:
        print(p)
    if not problems:
        print(f"paths: {checked} references to repository paths, every one in the tree")
    else:
        print(f"{len(problems)} reference(s) to paths that are not in the tree: fix the reference "
              f"(another project's path: write it owner/repo:path, list it in NOT_OURS, or mark "
              f"the line '{OPT_OUT}')")
        return 1
    return 0


def main(argv):
    return run(argv, __doc__, self_test, check_root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
