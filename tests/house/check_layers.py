#!/usr/bin/env python3
"""The layers, held to the build: every #include of driver/, lib/, tools/ and examples/
must reach a folder that the including folder's meson.build declares a dependency on
(directly or through the dependencies of those), and every declared dependency and every
include must be one the map of docs/README.md gives the folder: a folder it may use,
directly or through those. Up the layers or across one row (lib/ref -> lib/exec,
driver/os -> driver/kmd, one tool -> another) fails alike. The map is read from the
README's picture ("The layers"), so it is written once; a folder the picture does not
place fails, and so does a README without the picture.

Each folder with a meson.build is one unit. A unit's declared dependencies are the
`<name>_dep` variables its meson.build names (comments left out) that some meson.build
of the tree defines with declare_dependency; a variable stands for the folder that
defines it. So a header included without a declared dependency, or a dependency on a
higher layer, fails here even though the compiler, which sees the whole tree through one
include path, would accept it.

Usage: check_layers.py SOURCE_ROOT      exit 0, or 1 with one line per offending edge
       check_layers.py --self-test      builds small trees with known faults and checks
                                        that each is reported (the check can fail)
"""
import collections
import os
import re
import sys
import tempfile

from house_tree import run, write_tree, tally

UNIT_ROOTS = ("driver", "lib", "tools", "examples")
# A dependency variable that stands for a folder other than the one defining it:
# ork_shared_dep (lib/api) gives only the public header; ork_config_dep (the top
# meson.build) gives only the generated ork_config.h at the build root.
SPECIAL_DEPS = {"ork_shared_dep": "include/ork", "ork_config_dep": "."}
# Folders that are not units of their own but belong to one: libork implements the
# public header.
IMPLICIT = {"lib/api": {"include/ork"}}
SOURCE_EXT = (".c", ".cpp", ".h", ".hpp")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DEP_DEF_RE = re.compile(r"^\s*(\w+_dep)\s*=\s*declare_dependency\b", re.M)
DEP_USE_RE = re.compile(r"\b(\w+_dep)\b")


# The map is docs/README.md's picture ("The layers"), read by layer_map below: each row names
# its folders in the left column and, after the arrow, the folders they may use directly (a
# parenthesis is a note, not an edge). A folder may use what those use too; a dependency
# (declared or included) outside that closure fails, so an edge inside a layer (lib/ref ->
# lib/exec, driver/os -> driver/kmd) fails like one up the layers. A new folder must be placed
# in the picture before it builds. tools/<tool> stands for every tool but tools/common.
README = os.path.join("docs", "README.md")
PATH_TOKEN_RE = re.compile(r"^[a-z_]+(/[\w<>.]+)*/?$")

# What the build needs beside the picture, each for a reason the picture does not draw:
# folders of folders (their meson.build only visits their subfolders); ork_driver_dep, the
# driver layer as a whole (driver/meson.build); the generated ork_config.h at the build root
# (".") that lib/io and lib/api read; the public header that libork implements.
BUILD_MAP = {
    ".": set(),
    "include": set(),
    "driver/emu": set(),
    "lib": set(),
    "tools": set(),
    "driver": {"driver/kmd", "driver/emu/kernel"},
    "lib/io": {"."},
    "lib/api": {"include/ork", "."},
}


def picture_lines(text):
    """The lines of the first fenced block under the heading "## The layers", or None."""
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == "## The layers")
        fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
        end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    except StopIteration:
        return None
    return lines[fence + 1:end]


def row_folders(left):
    """The folders a row's left column names (a file stands for its folder), or []."""
    folders = []
    for token in re.split(r"\s{2,}", left.strip()):
        if "/" not in token or " " in token or not PATH_TOKEN_RE.match(token):
            break
        token = token.rstrip("/")
        folders.append(os.path.dirname(token) if re.search(r"\.\w+$", token) else token)
    return folders


def targets(text):
    """The folders a row's right column names, notes in parentheses left out."""
    depth, kept = 0, []
    for ch in text:
        depth += ch == "("
        if depth == 0:
            kept.append(ch)
        depth -= ch == ")" and depth > 0
    words = re.split(r"[\s,;]+", "".join(kept))
    return {w for w in words if "/" in w and PATH_TOKEN_RE.match(w)}


def layer_map(text):
    """{folder: folders it may use directly} from the picture in `text`, or None."""
    lines = picture_lines(text)
    if not lines:
        return None
    arrows = collections.Counter(m.start() for l in lines for m in re.finditer(r"-> ", l))
    if not arrows:
        return None
    col = arrows.most_common(1)[0][0]
    rows, current = {}, None
    for line in lines:
        if len(line) > 1 and line[0] == " " and line[1] not in " .":
            folders = row_folders(line[:col])
            current = (folders, []) if line[col:col + 2] == "->" else (folders, None)
            for f in folders:
                rows[f] = current
            if current[1] is not None:
                current[1].append(line[col + 2:])
        elif line.strip().startswith("...."):
            current = None
        elif current is not None and current[1] is not None:
            current[1].append(line[col:])
    return {f: targets(" ".join(right)) if right is not None else set() for f, (_, right) in rows.items()}


def read_map(root):
    """The map of root's docs/README.md with BUILD_MAP's entries added, or None."""
    try:
        with open(os.path.join(root, README), encoding="utf-8") as f:
            drawn = layer_map(f.read())
    except OSError:
        return None
    if drawn is None:
        return None
    merged = {k: set(v) for k, v in drawn.items()}
    for folder, extra in BUILD_MAP.items():
        merged.setdefault(folder, set()).update(extra)
    return merged


def map_entry(layers, folder):
    """The key of the map `layers` that places `folder`, or None."""
    if folder in layers:
        return folder
    if folder.startswith("tools/") and folder.count("/") == 1:
        return "tools/<tool>"
    return None


def map_closure(layers, folder):
    """Every folder `folder` may use, by the map (itself not included)."""
    seen, todo = set(), [folder]
    while todo:
        key = map_entry(layers, todo.pop())
        for d in layers.get(key, ()) if key else ():
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def against_map(layers, folder, target):
    """Why an edge folder -> target breaks the map, or None when the map allows it."""
    if folder == "." or target in map_closure(layers, folder):
        return None
    if folder in map_closure(layers, target):
        return f"above {folder} in the map"
    return f"not a folder the map lets {folder} use"


def strip_comments(text):
    out = []
    for line in text.splitlines():
        quote = None
        for i, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch == "#":
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def meson_files(root):
    for top in ("",) + UNIT_ROOTS + ("include",):
        base = os.path.join(root, top)
        if top == "":
            if os.path.isfile(os.path.join(root, "meson.build")):
                yield "."
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            if "meson.build" in filenames:
                yield os.path.relpath(dirpath, root)


def read_units(root):
    """-> (defined: dep variable -> folder, uses: folder -> set of dep variables)."""
    defined, uses = {}, {}
    for folder in meson_files(root):
        text = strip_comments(open(os.path.join(root, folder, "meson.build")).read())
        own = set(DEP_DEF_RE.findall(text))
        for var in own:
            defined[var] = SPECIAL_DEPS.get(var, folder)
        uses[folder] = (set(DEP_USE_RE.findall(text)) - own, own)
    return defined, uses


def folder_deps(defined, uses):
    """folder -> folders its meson.build declares (direct), the dep variables resolved."""
    deps = {}
    for folder, (used, own) in uses.items():
        deps[folder] = {defined[v] for v in used if v in defined} - {folder}
        deps[folder] |= IMPLICIT.get(folder, set())
        # A folder that defines a variable standing elsewhere (ork_shared_dep) does not
        # depend on it; a variable defined here stands for this folder.
    for var, folder in SPECIAL_DEPS.items():
        deps.setdefault(folder, set())
    return deps


def closure(deps, folder):
    seen, todo = set(), [folder]
    while todo:
        f = todo.pop()
        for d in deps.get(f, ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def owner(folders, path):
    """The unit a path belongs to: its nearest folder with a meson.build."""
    d = path
    while d and d not in folders:
        d = os.path.dirname(d)
    return d or "."


def include_target(inc, src_folder, folders):
    if "/" not in inc:
        return "." if inc == "ork_config.h" else src_folder
    head = inc.split("/")[0]
    if head in ("ork", "uapi"):
        return "include/" + head
    return owner(folders, os.path.dirname(inc))


def check(root):
    layers = read_map(root)
    if layers is None:
        return [f"{README}: no picture of the layers (a fenced block with '->' rows under "
                "\"## The layers\")"]
    defined, uses = read_units(root)
    deps = folder_deps(defined, uses)
    folders = set(uses) | set(SPECIAL_DEPS.values())
    errors = [f"{f}/meson.build: a folder docs/README.md's map does not place (add it to the picture)"
              for f in sorted(uses) if map_entry(layers, f) is None]
    for folder in sorted(uses):
        for d in sorted(deps[folder]):
            why = against_map(layers, folder, d)
            if why:
                errors.append(f"{folder}/meson.build: depends on {d}, {why}")
    for folder in sorted(f for f in uses if f.split("/")[0] in UNIT_ROOTS):
        allowed = closure(deps, folder) | {folder}
        base = os.path.join(root, folder)
        for name in sorted(os.listdir(base)):
            path = os.path.join(folder, name)
            if not name.endswith(SOURCE_EXT) or not os.path.isfile(os.path.join(root, path)):
                continue
            for lineno, line in enumerate(open(os.path.join(root, path), errors="replace"), 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = include_target(m.group(1), owner(folders, folder), folders)
                why = against_map(layers, folder, target) if target != folder else None
                if target in allowed and not why:
                    continue
                why = why or f"not a dependency {folder}/meson.build declares"
                errors.append(f"{path}:{lineno}: includes {m.group(1)}: {target} is {why}")
    return errors


# The self-test's picture, drawn as docs/README.md draws its own: (left column, the right
# column's lines). A note in parentheses names a folder that is no edge (driver/emu/npu).
SAMPLE_ROWS = [
    ("tools/<tool>        a tool", ["lib/api"]),
    ("lib/api             handles", ["lib/exec (a note: driver/emu/npu is", "no edge), driver/kmd"]),
    ("lib/exec            models", ["lib/matmul"]),
    ("lib/matmul          plan", ["lib/ref, driver/kmd"]),
    ("lib/ref  lib/io     oracle, io", ["driver/common"]),
    (".....", None),
    ("driver/kmd          backends", ["driver/os"]),
    ("driver/emu/npu      the NPU", ["driver/os"]),
    ("driver/os           the seam", None),
]


def sample_readme(rows):
    """A docs/README.md whose picture has `rows` (arrows at column 36)."""
    lines = ["# book", "", "## The layers", "", "```"]
    for left, right in rows:
        if right is None:
            lines.append(left if left.startswith(".") else f" {left}")
            continue
        lines.append(f" {left:<35}-> {right[0]}")
        lines += [" " * 39 + r for r in right[1:]]
    return "\n".join(lines + ["```", ""])


def self_test_parse():
    """The picture read back: 1 when it is not the map SAMPLE_ROWS draws."""
    want = {"tools/<tool>": {"lib/api"}, "lib/api": {"lib/exec", "driver/kmd"},
            "lib/exec": {"lib/matmul"}, "lib/matmul": {"lib/ref", "driver/kmd"},
            "lib/ref": {"driver/common"}, "lib/io": {"driver/common"},
            "driver/kmd": {"driver/os"}, "driver/emu/npu": {"driver/os"}, "driver/os": set()}
    got = layer_map(sample_readme(SAMPLE_ROWS))
    if got != want:
        print(f"self-test 'the picture read back': expected {want}, got {got}")
        return 1
    return 0


def self_test():
    """Each case: a tiny tree with one fault, and the text its report must contain."""
    base = {
        "docs/README.md": sample_readme(SAMPLE_ROWS),
        "meson.build": "ork_config_dep = declare_dependency()\n",
        "driver/os/meson.build": "ork_os_dep = declare_dependency()\n",
        "driver/os/os.h": "#pragma once\n",
        "lib/matmul/meson.build": "x = lib(dependencies : ork_os_dep)\n"
                                  "ork_matmul_dep = declare_dependency()\n",
        "lib/matmul/run.cpp": '#include "driver/os/os.h"\n#include "run.h"\n',
        "lib/api/meson.build": "ork_dep = declare_dependency(dependencies : ork_matmul_dep)\n",
        "lib/api/api.cpp": '#include "ork/ork.h"\n#include "lib/matmul/run.h"\n',
        "tools/t/meson.build": "e = exe(dependencies : ork_dep)  # ork_os_dep in a comment\n",
        "tools/t/main.cpp": '#include "lib/api/api.h"\n#include "driver/os/os.h"\n',
    }
    cases = [
        ("a clean tree", {}, None),
        ("driver -> lib", {"driver/os/os.cpp": '#include "lib/matmul/run.h"\n'},
         "driver/os/os.cpp:1: includes lib/matmul/run.h: lib/matmul is above driver/os in the map"),
        ("lib/matmul -> lib/api", {"lib/matmul/x.cpp": '#include "lib/api/api.h"\n'},
         "lib/api is above lib/matmul in the map"),
        ("undeclared", {"lib/api/meson.build": "ork_dep = declare_dependency()\n"},
         "lib/api/api.cpp:2: includes lib/matmul/run.h: lib/matmul is not a dependency"),
        ("a comment is no declaration",
         {"tools/t/meson.build": "e = exe()  # ork_dep\n"},
         "tools/t/main.cpp:1: includes lib/api/api.h"),
        ("a dependency upwards",
         {"driver/os/meson.build": "ork_os_dep = declare_dependency(dependencies : ork_dep)\n"},
         "driver/os/meson.build: depends on lib/api, above driver/os in the map"),
        ("lib -> tools", {"lib/matmul/y.cpp": '#include "tools/t/cli.h"\n'},
         "tools/t is above lib/matmul in the map"),
        # Edges inside a layer: each folder has its own place in the map.
        ("lib/ref -> lib/exec, declared",
         {"lib/exec/meson.build": "ork_exec_dep = declare_dependency()\n",
          "lib/ref/meson.build": "r = lib(dependencies : ork_exec_dep)\nork_ref_dep = declare_dependency()\n"},
         "lib/ref/meson.build: depends on lib/exec, above lib/ref in the map"),
        ("driver/os -> driver/kmd, included",
         {"driver/kmd/meson.build": "ork_kmd_dep = declare_dependency(dependencies : ork_os_dep)\n",
          "driver/os/ioctl.cpp": '#include "driver/kmd/kmd.h"\n'},
         "driver/os/ioctl.cpp:1: includes driver/kmd/kmd.h: driver/kmd is above driver/os in the map"),
        ("driver/emu/npu -> driver/kmd, one row",
         {"driver/kmd/meson.build": "ork_kmd_dep = declare_dependency(dependencies : ork_os_dep)\n",
          "driver/emu/npu/meson.build": "n = lib(dependencies : ork_kmd_dep)\n"
                                        "ork_emu_npu_dep = declare_dependency()\n"},
         "driver/emu/npu/meson.build: depends on driver/kmd, not a folder the map lets driver/emu/npu use"),
        ("one tool -> another", {"tools/u/meson.build": "e = exe(dependencies : ork_dep)\n",
                                 "tools/u/main.cpp": '#include "tools/t/cli.h"\n'},
         "tools/u/main.cpp:1: includes tools/t/cli.h: tools/t is not a folder the map lets tools/u use"),
        ("a folder the map does not place", {"lib/extra/meson.build": "ork_extra_dep = declare_dependency()\n"},
         "lib/extra/meson.build: a folder docs/README.md's map does not place"),
        # The map is the picture: a row it loses unplaces the folder, and no picture fails.
        ("a row the picture lost",
         {"docs/README.md": sample_readme([r for r in SAMPLE_ROWS if not r[0].startswith("lib/matmul")])},
         "lib/matmul/meson.build: a folder docs/README.md's map does not place"),
        ("an edge the picture lost",
         {"docs/README.md": sample_readme([(l, ["lib/ref"] if l.startswith("lib/matmul") else r)
                                           for l, r in SAMPLE_ROWS])},
         "lib/matmul/meson.build: depends on driver/os, not a folder the map lets lib/matmul use"),
        ("no picture", {"docs/README.md": "# book\n"}, "docs/README.md: no picture of the layers"),
    ]
    failed = self_test_parse()
    for name, change, expect in cases:
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, {**base, **change})
            errors = check(tmp)
        ok = (not errors) if expect is None else any(expect in e for e in errors)
        if not ok:
            failed += 1
            print(f"self-test '{name}': expected {expect!r}, got {errors}")
    return tally(len(cases) + 1, failed)


def check_root(root):
    """The check over the tree at root: its report, and 1 when it found a fault."""
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} include(s) or dependencies against the layers "
              "(docs/README.md \"Layers\")")
        return 1
    units = sum(1 for f in meson_files(root) if f.split("/")[0] in UNIT_ROOTS)
    print(f"layers: {units} folders, every include within their declared dependencies")
    return 0


def main(argv):
    return run(argv, __doc__, self_test, check_root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
