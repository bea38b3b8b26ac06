#!/usr/bin/env python3
"""Every test group runs each of its tests exactly once (tests/meson.build "Test groups").

Usage: check_test_groups.py BUILD_DIR

A test group is one GoogleTest program holding several sources' tests; each meson test runs
it with --ork-group= (every source compiled in) and --ork-source= (its own sources), and the
program's main (tests/support/gtest_group_main.cpp) turns the latter into a filter. This
reads the build dir's test list (meson-info/intro-tests.json) and, for each program that a
test runs with --ork-group=, lists the tests each meson test selects (--gtest_list_tests)
and fails unless:
  - the program with --ork-group= alone lists its tests (none comes from a file outside
    the group, which no meson test would run);
  - each meson test selects at least one test;
  - the meson tests of different --ork-source= select disjoint tests, whose union is every
    test the program holds (no test dropped, none run twice);
  - the program refuses an --ork-source= outside its group (exit 2, naming it).
Exit 0 when all hold, 1 naming each problem, 2 on bad usage.
"""
import json
import os
import subprocess
import sys


def listed(cmd, env):
    """The tests --gtest_list_tests prints, as 'Suite.Name' (None and the output on failure)."""
    try:
        r = subprocess.run(cmd + ["--gtest_list_tests"], env=env, capture_output=True, text=True)
    except OSError as e:
        return None, str(e)
    if r.returncode != 0:
        return None, r.stderr.strip()
    names, suite = set(), ""
    for line in r.stdout.splitlines():
        if not line.strip():
            continue
        name = line.split("#")[0].rstrip()
        if not line.startswith(" "):
            suite = name
        else:
            names.add(suite + name.strip())
    return names, ""


def group_tests(build_dir):
    """{program: {(group_arg, source_arg): [meson test names]}} for every group program."""
    with open(os.path.join(build_dir, "meson-info", "intro-tests.json"), encoding="utf-8") as f:
        tests = json.load(f)
    groups = {}
    for t in tests:
        args = t["cmd"][1:]
        group = [a for a in args if a.startswith("--ork-group=")]
        source = [a for a in args if a.startswith("--ork-source=")]
        if not group:
            continue
        key = (group[0], source[0] if source else "")
        groups.setdefault(t["cmd"][0], {}).setdefault(key, []).append(t["name"])
    return groups


def check_program(program, selections, env):
    problems = []
    group_args = {g for g, _ in selections}
    if len(group_args) != 1:
        return [f"{program}: its tests pass {len(group_args)} different --ork-group= lists"]
    group_arg = group_args.pop()
    every, err = listed([program, group_arg], env)
    if every is None:
        return [f"{program} {group_arg}: refused to list its tests: {err}"]
    seen = {}
    for (_, source_arg), names in sorted(selections.items()):
        if not source_arg:
            problems.append(f"{program}: meson test {names[0]} passes no --ork-source=")
            continue
        chosen, err = listed([program, group_arg, source_arg], env)
        if not chosen:
            problems.append(f"{program} {source_arg} (meson test {names[0]}): selects no test {err}")
            continue
        for name in sorted(chosen):
            if name in seen:
                problems.append(f"{program}: {name} is run by both {seen[name]} and {source_arg}")
            seen[name] = source_arg
    for name in sorted(every - set(seen)):
        problems.append(f"{program}: {name} is run by no meson test")
    r = subprocess.run([program, group_arg, "--ork-source=not_in_the_group.cpp", "--gtest_list_tests"],
                       env=env, capture_output=True, text=True, check=False)
    if r.returncode != 2 or "not_in_the_group.cpp" not in r.stderr:
        problems.append(f"{program}: an --ork-source= outside the group gave exit {r.returncode}, "
                        f"expected 2 naming it")
    return problems


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    env = dict(os.environ)
    env.pop("GTEST_FILTER", None)  # the listings must see every test
    groups = group_tests(argv[1])
    if not groups:
        print("check_test_groups: no test passes --ork-group= (expected the groups of tests/meson.build)")
        return 1
    problems = []
    for program, selections in sorted(groups.items()):
        problems += check_program(program, selections, env)
        print(f"{os.path.basename(program)}: {len(selections)} selections checked")
    for p in problems:
        print("check_test_groups:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
