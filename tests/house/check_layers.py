#!/usr/bin/env python3
"""The layers, held to the build: every #include of driver/, lib/, tools/ and examples/
must reach a folder that the including folder's meson.build declares a dependency on
(directly or through the dependencies of those), and no declared dependency may point up
the layer order include/uapi -> driver -> lib -> lib/api (libork) -> tools.

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
import os
import re
import sys
import tempfile

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


def rank(folder):
    """Layer of a folder: a dependency may only point to an equal or lower rank."""
    if folder in (".", "include/uapi"):
        return 0
    if folder.startswith("driver"):
        return 1
    if folder == "include/ork" or folder.startswith("lib/api"):
        return 3
    if folder.startswith("lib"):
        return 2
    return 4  # tools, examples


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
    defined, uses = read_units(root)
    deps = folder_deps(defined, uses)
    folders = set(uses) | set(SPECIAL_DEPS.values())
    errors = []
    for folder in sorted(uses):
        for d in sorted(deps[folder]):
            if folder != "." and rank(d) > rank(folder):
                errors.append(f"{folder}/meson.build: depends on {d}, a higher layer")
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
                if target in allowed:
                    continue
                why = ("a higher layer" if rank(target) > rank(folder)
                       else "not a dependency its meson.build declares")
                errors.append(f"{path}:{lineno}: includes {m.group(1)}: {target} is {why} "
                              f"of {folder}")
    return errors


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def self_test():
    """Each case: a tiny tree with one fault, and the text its report must contain."""
    base = {
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
         "driver/os/os.cpp:1: includes lib/matmul/run.h: lib/matmul is a higher layer"),
        ("lib/matmul -> lib/api", {"lib/matmul/x.cpp": '#include "lib/api/api.h"\n'},
         "lib/api is a higher layer"),
        ("undeclared", {"lib/api/meson.build": "ork_dep = declare_dependency()\n"},
         "lib/api/api.cpp:2: includes lib/matmul/run.h: lib/matmul is not a dependency"),
        ("a comment is no declaration",
         {"tools/t/meson.build": "e = exe()  # ork_dep\n"},
         "tools/t/main.cpp:1: includes lib/api/api.h"),
        ("a dependency upwards",
         {"driver/os/meson.build": "ork_os_dep = declare_dependency(dependencies : ork_dep)\n"},
         "driver/os/meson.build: depends on lib/api, a higher layer"),
        ("lib -> tools", {"lib/matmul/y.cpp": '#include "tools/t/cli.h"\n'},
         "tools/t is a higher layer"),
    ]
    failed = 0
    for name, change, expect in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for rel, text in {**base, **change}.items():
                write(tmp, rel, text)
            errors = check(tmp)
        ok = (not errors) if expect is None else any(expect in e for e in errors)
        if not ok:
            failed += 1
            print(f"self-test '{name}': expected {expect!r}, got {errors}")
    print(f"self-test: {len(cases) - failed} of {len(cases)} cases right")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    errors = check(argv[1])
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} include(s) or dependencies against the layers "
              "(docs/README.md \"Layers\")")
        return 1
    units = sum(1 for f in meson_files(argv[1]) if f.split("/")[0] in UNIT_ROOTS)
    print(f"layers: {units} folders, every include within their declared dependencies")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
