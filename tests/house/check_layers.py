#!/usr/bin/env python3
"""The layers, held to the build: every #include of driver/, lib/, tools/ and examples/
must reach a folder that the including folder's meson.build declares a dependency on
(directly or through the dependencies of those), and every declared dependency and every
include must be one the map of docs/README.md ("The layers", MAP below) gives the folder:
a folder it may use, directly or through those. Up the layers or across one row
(lib/ref -> lib/exec, driver/os -> driver/kmd, one tool -> another) fails alike.

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


# The map of docs/README.md ("The layers"): each folder and the folders it may use directly.
# A folder may use what those use too; a dependency (declared or included) outside that
# closure fails, so an edge inside a layer (lib/ref -> lib/exec, driver/os -> driver/kmd)
# fails like one up the layers. A new folder must be placed here before it builds.
# tools/<tool> stands for every tool but tools/common.
MAP = {
    ".": set(),
    "include": set(),  # a folder of folders
    "include/uapi": set(),
    "include/ork": set(),
    "driver/common": set(),
    "driver/regs": set(),
    "driver/regcmd": {"driver/regs", "driver/common"},  # the NPU window (npu_window.h)
    "driver/os": {"driver/common", "include/uapi"},
    "driver/emu": set(),  # a folder of folders: its meson.build only visits them
    "driver/emu/npu": {"driver/regcmd", "driver/os"},
    "driver/kmd": {"driver/os", "include/uapi"},
    "driver/emu/kernel": {"driver/emu/npu", "include/uapi"},
    "driver/emu/shim": {"driver/emu/kernel"},
    "driver": {"driver/kmd", "driver/emu/kernel"},  # ork_driver_dep: the whole layer
    "lib": set(),  # a folder of folders
    "lib/ref": {"driver/common"},
    "lib/io": {"driver/common", "."},
    "lib/sched": {"driver/common"},
    "lib/matmul": {"lib/ref", "driver/kmd", "driver/regcmd"},
    "lib/quant": {"lib/matmul"},
    # the emulator's timing model prices a plan's matmuls (the board projection)
    "lib/exec": {"lib/quant", "lib/io", "lib/sched", "driver/emu/npu"},
    # an emulated device owns its fake kernel, whose counters the statistics read
    "lib/api": {"include/ork", "lib/exec", "driver/kmd", "driver/emu/kernel", "."},
    "tools": set(),  # a folder of folders
    "tools/common": {"lib/api"},
    "tools/<tool>": {"lib/api", "tools/common"},
    "examples": {"include/ork"},
}


def map_entry(folder):
    """The MAP key that places `folder`, or None."""
    if folder in MAP:
        return folder
    if folder.startswith("tools/") and folder.count("/") == 1:
        return "tools/<tool>"
    return None


def map_closure(folder):
    """Every folder `folder` may use, by the map (itself not included)."""
    seen, todo = set(), [folder]
    while todo:
        key = map_entry(todo.pop())
        for d in MAP.get(key, ()) if key else ():
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def against_map(folder, target):
    """Why an edge folder -> target breaks the map, or None when the map allows it."""
    if folder == "." or target in map_closure(folder):
        return None
    if folder in map_closure(target):
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
    defined, uses = read_units(root)
    deps = folder_deps(defined, uses)
    folders = set(uses) | set(SPECIAL_DEPS.values())
    errors = [f"{f}/meson.build: a folder docs/README.md's map does not place (add it to MAP)"
              for f in sorted(uses) if map_entry(f) is None]
    for folder in sorted(uses):
        for d in sorted(deps[folder]):
            why = against_map(folder, d)
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
                why = against_map(folder, target) if target != folder else None
                if target in allowed and not why:
                    continue
                why = why or f"not a dependency {folder}/meson.build declares"
                errors.append(f"{path}:{lineno}: includes {m.group(1)}: {target} is {why}")
    return errors


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
    ]
    failed = 0
    for name, change, expect in cases:
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, {**base, **change})
            errors = check(tmp)
        ok = (not errors) if expect is None else any(expect in e for e in errors)
        if not ok:
            failed += 1
            print(f"self-test '{name}': expected {expect!r}, got {errors}")
    return tally(len(cases), failed)


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
