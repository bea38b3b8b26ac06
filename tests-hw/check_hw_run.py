#!/usr/bin/env python3
"""hw_run's choice between the board and the shim (hw_run.c), run under the shim.

    check_hw_run.py HW_RUN PRELOAD

With the emulated nodes opening, hw_run finds no NPU node of a board (the shim's nodes say
[ork-emu]) and runs the program on the emulator: exit 0, EMULATOR. With every open of them
refused (ORK_EMU_FAULTS=open:eacces x*: a node that exists but this user may not open), the
nodes may be the NPU: exit 1 naming the node and the error, and the program never runs."""
import os
import re
import subprocess
import sys

NODE = r"/dev/dri/(card0|card1|renderD129)"  # readdir order; card0 is the display
REFUSED = (r"tests-hw: NPU NODE NOT USABLE: " + NODE + r" exists but cannot be opened \(Permission denied\); "
           r"it may be the NPU; libork's open of rknpu: no rknpu device found \(nodes seen: .*\)\. "
           + re.escape("Not testing the emulator on a board: fix the access (docs/board.md) and run again"))
EMULATED = ("tests-hw: EMULATOR: no NPU node on this machine; rknpu through libork_emu_shim's "
            "fake /dev and sysfs")


def run(hw_run, preload, faults, marker):
    env = dict(os.environ, LD_PRELOAD=preload, ORK_EMU_FAULTS=faults)
    # The program writes a marker file, so a run of it is seen whatever hw_run prints.
    program = ["/bin/sh", "-c", f"echo ran > {marker}"]
    p = subprocess.run([hw_run, "--shim", preload, "rknpu"] + program, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines()[0] if p.stdout else ""


def main():
    hw_run, preload = sys.argv[1], sys.argv[2]
    marker = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"check_hw_run.{os.getpid()}")
    failures = []
    rc, line = run(hw_run, preload, "", marker)
    if rc != 0 or line != EMULATED or not os.path.exists(marker):
        failures.append(f"no fault: exit {rc}, first line {line!r}, program ran: {os.path.exists(marker)}")
    if os.path.exists(marker):
        os.unlink(marker)
    rc, line = run(hw_run, preload, "open:eacces x*", marker)
    if rc != 1 or not re.fullmatch(REFUSED, line) or os.path.exists(marker):
        failures.append(f"open:eacces: exit {rc}, first line {line!r}, program ran: {os.path.exists(marker)}")
    if os.path.exists(marker):
        os.unlink(marker)
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
