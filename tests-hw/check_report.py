#!/usr/bin/env python3
"""Runs tests-hw/run-on-board --emulator and checks the report it writes (meson test
run_on_board_emulator): the devices it found, every test's status and first line, and the
figures against mc_prof's own rows, for both kernel interfaces; the submit / task split's rows
(N = 1, 3, 12, 48 per interface), and mc_prof --calibrate on the report recovering the
emulator's own timing model (its per-submit and per-task costs) from the rknpu rows. With
--ggml (a -Dllama_cpp build) also llama.cpp's test-backend-ops steps (check_ggml). With
--faults the emulator
fails every submit: then the failing tests must be reported as failures, each with its
register dumps from the device run and the emulator run, and the script must exit 1.

   check_report.py RUN_ON_BOARD [--rows M] [--ggml]

--rows M: the runbook's published sweep at M rows (run-on-board --rows), for the builds where
the emulator is slow (meson.build beside this file says which); bad --rows values must be
refused with exit 2 either way."""
import glob
import json
import os
import subprocess
import sys
import tempfile

TESTS = ["test_nodes", "test_feature_layout"]


def fail(why):
    print("check_report: FAIL:", why)
    sys.exit(1)


ROWS = 512  # the published experiment's M; main() sets --rows


def run(script, env, out, tests=TESTS):
    cmd = [script, "--emulator", "--quick", "--rows", str(ROWS), "--tests", ",".join(tests), "-o", out]
    # No timeout of its own: meson's (600 s, times --timeout-multiplier) bounds the whole test,
    # and the sweep under a sanitizer on a loaded machine can take most of it.
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout)
    reports = glob.glob(os.path.join(out, "ork-board-report-*.json"))
    if len(reports) != 1:
        fail(f"expected one report in {out}, found {reports}")
    if not os.path.exists(reports[0][:-5] + ".txt"):
        fail("the text summary is missing")
    with open(reports[0]) as f:
        return r.returncode, json.load(f)


def check_passing(script, env):
    with tempfile.TemporaryDirectory() as out:
        rc, rep = run(script, env, out)
    if rc != 0:
        fail(f"exit status {rc}, expected 0")
    if rep["mode"] != "emulator":
        fail(f"mode {rep['mode']!r}")
    devices = {d["interface"]: d for d in rep["devices"]}
    if set(devices) != {"rknpu", "rocket"}:
        fail(f"devices {sorted(devices)}")
    want_node = {"rknpu": "/dev/dri/card1", "rocket": "/dev/accel/accel0"}
    for iface, d in devices.items():
        if d["mode"] != "emulator" or d["node"] != want_node[iface] or not d["driver_version"] or d["cores"] != 3:
            fail(f"device {d}")
    if devices["rknpu"]["hw_version"] != "0x46495245":
        fail(f"rknpu hw_version {devices['rknpu']['hw_version']}")
    tests = {(t["name"], t["interface"]): t for t in rep["tests"]}
    if set(tests) != {(n, i) for n in TESTS for i in ("rknpu", "rocket")}:
        fail(f"tests {sorted(tests)}")
    for t in tests.values():
        if t["status"] != "pass" or "EMULATOR" not in t["first_line"]:
            fail(f"test {t}")
    if rep["summary"] != {"passed": 4, "failed": 0, "skipped": 0, "mc_prof_failed": 0}:
        fail(f"summary {rep['summary']}")
    figures = rep["figures"]
    if len(figures) != 16:
        fail(f"{len(figures)} figures, expected 8 per interface")
    for iface in ("rknpu", "rocket"):
        rows = rep["mc_prof"][iface]["rows"]
        mine = [f for f in figures if f["interface"] == iface]
        if len(rows) != 8 or len(mine) != 8:
            fail(f"{iface}: {len(rows)} mc_prof rows, {len(mine)} figures")
        for row, fig in zip(rows, mine):
            for key, src in (("name", "label"), ("measured_us", "device_us"), ("m", "m"), ("k", "k"), ("n", "n"),
                             ("cores", "cores"), ("mc_cap", "mc_cap"), ("mc", "mc"), ("us_median", "us_median")):
                if fig[key] != row[src]:
                    fail(f"{iface} {row['label']}: figure {key} = {fig[key]!r}, mc_prof {src} = {row[src]!r}")
            if not (isinstance(fig["measured_us"], (int, float)) and fig["measured_us"] > 0):
                fail(f"measured_us {fig['measured_us']!r}")
            if fig["layout"] != "chained" or fig["m"] != ROWS or fig["k"] not in (2048, 3584) or fig["cores"] not in (1, 3):
                fail(f"figure {fig}")
        if sorted({f["mc_cap"] for f in mine}) != [0, 31]:
            fail(f"{iface}: mc_cap values {sorted({f['mc_cap'] for f in mine})}")
    check_split(script, rep)


def check_split(script, rep):
    """The split rows, then mc_prof --calibrate on a copy of the report: on the emulator the
    kernel's device time is the timing model's, so the fit must give back timing.h's split."""
    for iface, source in (("rknpu", "kernel"), ("rocket", "wall")):
        rows = [r for r in rep["split"] if r["interface"] == iface]
        if [r["tasks"] for r in rows] != [1, 3, 12, 48]:
            fail(f"{iface}: split rows {rows}")
        for r in rows:
            if r["device_source"] != source or not (r["chained_us"] > 0 and r["separate_us"] > 0) or r["cores"] != 1:
                fail(f"{iface}: split row {r}")
            if source == "kernel" and r["tasks"] > 1 and not r["separate_us"] > r["chained_us"]:
                fail(f"{iface}: N submits no slower than one chained submit: {r}")
    mc_prof = os.path.join(os.path.dirname(os.path.abspath(script)), "..", "tools", "mc_prof", "mc_prof")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "report.json")
        with open(path, "w") as f:
            json.dump(rep, f)
        r = subprocess.run([mc_prof, "--calibrate", path, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"mc_prof --calibrate on the report: exit {r.returncode}: {r.stderr}")
    fit = json.loads(r.stdout)["split"]["rknpu"]
    for key, model in (("submit_us", "model_submit_us"), ("task_us", "model_task_us")):
        if abs(fit[key] - fit[model]) > 0.01 * fit[model]:
            fail(f"split fit {key} = {fit[key]:.2f}, the emulator's model has {fit[model]:.2f}: {fit}")


def check_failing(script, env):
    env = dict(env, ORK_EMU_FAULTS="submit:eio x*")
    with tempfile.TemporaryDirectory() as out:
        rc, rep = run(script, env, out, ["test_feature_layout"])
        if rc != 1:
            fail(f"with every submit failing: exit status {rc}, expected 1")
        for t in rep["tests"]:
            if t["status"] != "fail" or "log" not in t:
                fail(f"with every submit failing: test {t['name']}/{t['interface']} is {t['status']}")
            if t["regcmd_files"] < 1 or t["regcmd_files_differing"] != 0:
                fail(f"register dumps of {t['name']}/{t['interface']}: {t['regcmd_files']} files, "
                     f"{t['regcmd_files_differing']} differ (the same library on the same emulator)")
            emu = glob.glob(os.path.join(t["regcmd_dir"], "emulator", "*.regcmd"))
            if len(emu) != t["regcmd_files"]:
                fail(f"{t['name']}/{t['interface']}: {len(emu)} emulator dumps for {t['regcmd_files']} device dumps")
        if rep["summary"]["failed"] != 2 or rep["summary"]["mc_prof_failed"] != 1:
            fail(f"summary {rep['summary']}")


def check_bad_rows(script, env):
    """--rows takes a row count of one task (1 to 2047), and only on a dry run."""
    with tempfile.TemporaryDirectory() as out:
        bad = "is not a row count (1 to 2047)"
        for args, why in ((["--emulator", "--rows", "0"], bad), (["--emulator", "--rows", "2048"], bad),
                          (["--emulator", "--rows", "12x"], bad), (["--emulator", "--rows", "9" * 20], bad),
                          (["--emulator", "--rows"], "needs a row count"),
                          (["--rows", "200"], "for --emulator runs only")):
            r = subprocess.run([script, "-o", out] + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=60)
            if r.returncode != 2 or why not in r.stderr:
                fail(f"run-on-board {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r}; expected 2, {why!r}")
        if os.listdir(out):
            fail(f"a refused --rows left files: {os.listdir(out)}")


# A few of test-backend-ops' cases (their parameters matched by regex, test-backend-ops -p):
# Q8_0 weights at M = 1 and K = 256, for MUL_MAT and MUL_MAT_ID, to keep the dry run short.
GGML_TESTS = ["ggml_backend_ops_mul_mat", "ggml_backend_ops_mul_mat_id"]
GGML_PARAMS = "type_a=q8_0,type_b=f32,.*n=1,k=256"


def check_ggml(script, env):
    """With a -Dllama_cpp build: llama.cpp's test-backend-ops on the ggml backend, MUL_MAT and
    MUL_MAT_ID, through the shim on both interfaces, pass with cases run on ORK; with every
    submit failing they are reported as failures with their failing lines."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [script, "--emulator", "--quick", "--tests", ",".join(GGML_TESTS), "--ggml-params", GGML_PARAMS,
               "-o", out]
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        print(r.stdout)
        reports = glob.glob(os.path.join(out, "ork-board-report-*.json"))
        if r.returncode != 0 or len(reports) != 1:
            fail(f"ggml dry run: exit status {r.returncode}, reports {reports}")
        with open(reports[0]) as f:
            rep = json.load(f)
        tests = {(t["name"], t["interface"]): t for t in rep["tests"]}
        if set(tests) != {(n, i) for n in GGML_TESTS for i in ("rknpu", "rocket")}:
            fail(f"ggml dry run: tests {sorted(tests)}")
        for (name, iface), t in tests.items():
            with open(os.path.join(reports[0][:-5] + ".d", "logs", f"{name}-{iface}.log")) as f:
                ran = [line for line in f if line.strip().startswith(("MUL_MAT(", "MUL_MAT_ID(")) and "OK" in line]
            if t["status"] != "pass" or not ran:
                fail(f"ggml dry run: {name}/{iface} is {t['status']} with {len(ran)} cases OK on ORK")
    env = dict(env, ORK_EMU_FAULTS="submit:eio x*")
    with tempfile.TemporaryDirectory() as out:
        cmd = [script, "--emulator", "--quick", "--tests", GGML_TESTS[0], "--ggml-params", GGML_PARAMS, "-o", out]
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        with open(glob.glob(os.path.join(out, "ork-board-report-*.json"))[0]) as f:
            rep = json.load(f)
        if r.returncode != 1 or [(t["name"], t["status"], "log" in t) for t in rep["tests"]] != \
                [(GGML_TESTS[0], "fail", True)] * 2:
            fail(f"ggml dry run with every submit failing: exit {r.returncode}, tests {rep['tests']}")


def main():
    global ROWS
    script = sys.argv[1]
    args = sys.argv[2:]
    ggml = "--ggml" in args
    if ggml:
        args.remove("--ggml")
    if len(args) == 2 and args[0] == "--rows":
        ROWS = int(args[1])
    elif args:
        fail("usage: check_report.py RUN_ON_BOARD [--rows M] [--ggml]")
    env = dict(os.environ)
    for key in ("LD_PRELOAD", "ORK_DEVICE", "ORK_EMU_FAULTS", "ORK_DUMP_REGCMD"):
        env.pop(key, None)
    check_bad_rows(script, env)
    check_passing(script, env)
    check_failing(script, env)
    if ggml:
        check_ggml(script, env)
    print("check_report: ok")


if __name__ == "__main__":
    main()
