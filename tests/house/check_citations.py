#!/usr/bin/env python3
"""The repository stands alone: every source a file cites is either in the repository or
public (a repository, file and commit; a kernel header; a paper; a URL). Fails, listing
file:line, on

- a path that leaves the repository (`../` beyond the root, or the notes directory kept
  beside it);
- a source document by its number (the word "seed" and a three-digit number, in any case,
  or a file named `NNN_<16 hex digits>.txt`), with no exception: `mc_prof`'s published
  M-tile experiment is the flag `--published`, named after what it runs;
- a work item by number (the words issue, task with a '#', work item, followed by a number,
  an identifier made of "Issue" and digits, or a bare `#12` that no `owner/repo` names:
  a public issue is cited `owner/repo#12`), an item of a brief or list kept outside (an
  item number "of the brief"), notes kept outside (a subject's "notes say"), or a numbered habit of
  a style guide kept outside: the public header speaks of ORK_API_VERSION;
- a document the file names that is not in the repository: every `name.md` / `dir/name.md`
  token and every relative link target `[x](path)` of a Markdown file must resolve, relative to the
  file, to the repository root or to docs/. Paths in another repository are written
  `owner/repo:path` (skipped) or as a URL;
- a short name for a source (MTX, VND, RKT-K, RKT-M, SHIM, ORK, JAS) used anywhere while
  docs/hardware.md's source list does not define it.

Scans git's tracked text files (binary files and fuzz corpora skipped). Without git (a
release tarball) every file is scanned.

Usage: check_citations.py SOURCE_ROOT    exit 0, or 1 with one line per citation
       check_citations.py --self-test    small trees with one fault each (and clean
                                         look-alikes): the check must report the faults,
                                         and only them (the check can fail)"""
import os
import re
import subprocess
import sys

from house_tree import run, write_tree, tally

SKIP_PREFIXES = ("fuzz/corpus/",)
SELF = "tests/house/check_citations.py"

RULES = [
    ("a path outside the repository", re.compile(r"(?<![\w-])shared/(?:docs|seeds)\b|\.\./shared\b")),
    ("a source document by number", re.compile(
        r"(?i:\bseeds?[ _#/-]*0\d\d(?!\d))|Seed0\d\d|\b0\d\d_[0-9a-f]{16}\b")),
    ("a work item by number", re.compile(
        r"(?i:\bissue ?#?\d+|\bissues #?\d+,? (?:and|or) #?\d+|\btask ?#\d+|\bwork item ?#?\d+)|Issue\d+")),
    # `#12` with no owner/repo before it (those are scrubbed first, PUBLIC_ISSUE); a colour
    # (`fill='#333'`), an entity (`&#38;`) or a URL fragment (`page#12`) is not one.
    ("an issue number without its repository", re.compile(r"(?<![\w/'\"&#.-])#\d+(?![\w])")),
    ("an item of a document kept outside", re.compile(
        r"(?i)\bitems? #?\d+ of (?:the|a|our|your|my) \w+|\bthe brief(?:'s| (?:says|said|asks|asked|wants|lists))")),
    ("notes kept outside", re.compile(
        r"(?i)\bnotes (?:say|said|show|showed|tell|told|suggest|suggested|recommend)\b"
        r"|\b(?:per|according to|in|see) (?:the|our|my) (?:[\w-]+ )?notes\b")),
    ("a numbered habit of an outside style guide", re.compile(r"(?i)\bhabits? \d+")),
]
# owner/repo#N: a public issue, cited as such.
PUBLIC_ISSUE = re.compile(r"[\w.-]+/[\w.-]+#\d+")
# Lines without any of these cannot break a rule: skipped unread (keeps the check fast).
PREFILTER = re.compile(r"(?i:seed|shared|issue|task ?#|work item|habit|item|brief|notes)|#\d|\.md|\]\(|\.\./|_[0-9a-f]{16}")
MD_TOKEN = re.compile(r"(?<![\w/:.@-])((?:\.{1,2}/)*(?:[\w.-]+/)*[\w.-]+\.md)\b")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
PARENT_PATH = re.compile(r"(?<![\w.])((?:\.\./)+[\w.-][\w./-]*)")
DOCUMENT_PATH = re.compile(r"(?i)\.(?:md|txt|pdf|html?|rst|h|hpp|c|cc|cpp|py|json|xml)$|notes|seeds|shared|docs")


SHORTHANDS = ("MTX", "VND", "RKT-K", "RKT-M", "SHIM", "ORK", "JAS")
SHORTHAND_USE = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in SHORTHANDS) + r")(?![\w-])")


def defined_shorthands(root):
    """The short names docs/hardware.md's "Sources" table defines (its first column)."""
    text = read_text(os.path.join(root, "docs", "hardware.md")) or ""
    section = text.split("## Sources", 1)[1].split("\n## ", 1)[0] if "## Sources" in text else ""
    return {row.split("|")[1].strip() for row in section.split("\n") if row.startswith("| ")}


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        return sorted(n for n in out.split("\0") if n)
    except (OSError, subprocess.CalledProcessError):
        names = []
        for dirpath, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".git") and d != "build"]
            names += [os.path.relpath(os.path.join(dirpath, f), root) for f in files]
        return sorted(names)


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def inside(root, path):
    real = os.path.normpath(path)
    return real == root or real.startswith(root + os.sep)


def resolves(root, name, target):
    """True when `target` (a path a file named `name` cites) exists in the repository."""
    target = target.split("#")[0]
    if not target:
        return True
    here = os.path.dirname(os.path.join(root, name))
    for base in (here, root, os.path.join(root, "docs")):
        candidate = os.path.normpath(os.path.join(base, target))
        if inside(root, candidate) and os.path.exists(candidate):
            return True
    return False


def line_problems(root, name, line):
    problems = []
    scrubbed = PUBLIC_ISSUE.sub("", line)
    for what, rule in RULES:
        m = rule.search(scrubbed)
        if m:
            problems.append(f"{what}: '{m.group(0)}'")
    here = os.path.dirname(os.path.join(root, name))
    for m in PARENT_PATH.finditer(line):
        # A file or folder of notes beside the checkout; a relative symlink target such as
        # sysfs's `../../devices/...` in an example is not a citation.
        if not DOCUMENT_PATH.search(m.group(1)):
            continue
        if not inside(root, os.path.normpath(os.path.join(here, m.group(1)))):
            problems.append(f"a path that leaves the repository: '{m.group(1)}'")
    if "://" in line:
        line = re.sub(r"\w+://\S+", "", line)
    for m in MD_TOKEN.finditer(line):
        if not resolves(root, name, m.group(1)):
            problems.append(f"a document not in the repository: '{m.group(1)}'")
    for m in (MD_LINK.finditer(line) if name.endswith(".md") else ()):
        target = m.group(1)
        if re.match(r"^(?:[a-z]+:|#|<)", target):
            continue
        if not resolves(root, name, target):
            problems.append(f"a link to a file not in the repository: '{target}'")
    return problems


def check(root):
    """The failure lines for the tracked text files under root."""
    names = tracked_files(root)
    failures, scanned = [], 0
    defined, used = defined_shorthands(root), {}
    for name in names:
        if name == SELF or name.startswith(SKIP_PREFIXES):
            continue
        text = read_text(os.path.join(root, name))
        if text is None:
            continue
        scanned += 1
        for m in SHORTHAND_USE.finditer(text):
            used.setdefault(m.group(1), f"{name}:{text.count(chr(10), 0, m.start()) + 1}")
        # One pass over the whole text finds the few lines worth a closer look.
        starts = {text.rfind("\n", 0, m.start()) + 1 for m in PREFILTER.finditer(text)}
        for start in sorted(starts):
            end = text.find("\n", start)
            line = text[start:end if end >= 0 else len(text)]
            number = text.count("\n", 0, start) + 1
            for problem in line_problems(root, name, line):
                failures.append(f"FAIL: {name}:{number}: {problem}")
    for short, where in sorted(used.items()):
        if short not in defined:
            failures.append(f"FAIL: {where}: the short name {short} is not defined in docs/hardware.md's "
                            "source list")
    return failures, scanned


SELF_TEST_BASE = {
    "docs/hardware.md": "# Hardware\n\n## Sources\n\n| MTX | a public driver |\n\n## Next\n",
    "docs/a.md": "See [hardware](hardware.md) and docs/hardware.md; MTX says so.\n",
    "lib/a.cpp": ('#include "a.h"\n#define X 1\n// mtx512/rk3588-npu#3, airockchip/rknn-toolkit2#154\n'
                  '// the backend notes it; --published is the flag; 0x1f is #1f77b4\n'),
    "tools/plot.svg": "<rect fill='#333' stroke=\"#999\"/> &#38; page.html#12\n",
}
# The faults below are split across adjacent literals, so this file does not itself carry
# the citations it tests for.
SELF_TEST_CASES = [  # (what, file, text, the failure expected or None)
    ("a clean tree", None, None, None),
    ("a bare issue number", "lib/b.cpp", "// fixed in #12\n", "lib/b.cpp:1: an issue number without its repository: '#12'"),
    ("a repository's name without its owner", "docs/b.md", "(rknn-toolkit2 #419)\n", "'#419'"),
    ("a second issue without its repository", "docs/c.md", "`moby/moby#12170`, `#753`\n", "docs/c.md:1: an issue number without its repository: '#753'"),
    ("notes kept outside", "lib/c.cpp", "// the scheduling no" "tes say so\n", "lib/c.cpp:1: notes kept outside"),
    ("notes by name", "docs/d.md", "Per the planning no" "tes, M is 256.\n", "notes kept outside: 'Per the planning no" "tes'"),
    ("an item of a brief", "lib/d.cpp", "// item 7 of the bri" "ef\n", "an item of a document kept outside: 'item 7 of the bri" "ef'"),
    ("the brief", "docs/e.md", "As the bri" "ef says, no timing.\n", "an item of a document kept outside"),
    ("a work item", "lib/e.cpp", "// see iss" "ue 42\n", "a work item by number: 'iss" "ue 42'"),
    ("a source by number", "lib/f.cpp", "// se" "ed 012\n", "a source document by number"),
    ("a habit", "lib/g.cpp", "// hab" "it 4 of the guide\n", "a numbered habit"),
    ("a path outside", "lib/h.cpp", "// ../sha" "red/docs/style.md\n", "a path"),
    ("a missing document", "docs/f.md", "See [x](missing.md).\n", "a link to a file not in the repository: 'missing.md'"),
    ("an undefined short name", "lib/i.cpp", "// RKT-K says\n", "the short name RKT-K is not defined"),
]


def self_test():
    import tempfile
    failed = 0
    for what, rel, text, expect in SELF_TEST_CASES:
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, {**SELF_TEST_BASE, **({rel: text} if rel else {})})
            got, _ = check(tmp)
        # The fault is reported, and nothing outside the file that holds it.
        ok = not got if expect is None else any(expect in g for g in got) and all(rel in g for g in got)
        if not ok:
            failed += 1
            print(f"self-test '{what}': expected {expect!r}, got {got}")
    return tally(len(SELF_TEST_CASES), failed)


def check_root(root):
    """The check over the tree at root: its report, and 1 when it found a fault."""
    root = os.path.abspath(root)
    if not tracked_files(root):
        print(f"no files under {root}: wrong source root?")
        return 1
    failures, scanned = check(root)
    for failure in failures:
        print(failure)
    print(f"{scanned} text files checked, {len(failures)} citations of sources outside the repository"
          + ("" if not failures else ": cite docs/ (docs/hardware.md lists the public sources) "
             "or the public source itself"))
    return 1 if failures else 0


def main(argv):
    return run(argv, __doc__, self_test, check_root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
