#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The interpreter is found in the image, not its file (issue 22, item 8): the agent's
start-up read /usr/bin/python3.11 (6.8 MB mapped, its dynamic symbols walked) to find
_PyRuntime; it now looks the interpreter's symbols up in the executable's mapped hash table
(DT_GNU_HASH), as the loader does, and reads Py_Version where it is mapped.

Known answer: a launcher copies Debian's python3.11 into the work directory, opens the copy,
unlinks it and execs it through /proc/self/fd (the file is gone before the agent starts in
it, as when Python is upgraded under a running program), and the copy burns 300 ms of CPU
time in the Python function py_burn. The agent cannot open '<copy> (deleted)': before, no
interpreter was found and py_burn was absent; now py_burn holds its 300 ms within the
sampling tolerance. The program's output and exit code are those it has without us."""
import os

import e2elib as e

PY = "/usr/bin/python3.11"
MS = 300

LAUNCH = """import os, shutil, sys
copy = sys.argv[1]
shutil.copy(%r, copy)
fd = os.open(copy, os.O_RDONLY)
os.set_inheritable(fd, True)
os.unlink(copy)
os.execv("/proc/self/fd/%%d" %% fd, ["python3"] + sys.argv[2:])
""" % PY

BURN = """import time
def py_burn(ms):
    end = time.process_time() + ms / 1000
    n = 0
    while time.process_time() < end:
        n += 1
    return n
py_burn(%d)
print("burned %d ms")
""" % (MS, MS)


def main():
    if not os.access(PY, os.X_OK):
        e.skip("no %s (Debian's python3.11)" % PY, needs="python3.11")
    with e.Workdir("python-image") as w:
        launch, burn = w.join("launch.py"), w.join("burn.py")
        with open(launch, "w") as f:
            f.write(LAUNCH)
        with open(burn, "w") as f:
            f.write(BURN)
        # Its output is known (BURN): it is not run alone first to learn it.
        res = e.collect(w, "res", [PY, launch, w.join("python3.11-copy"), burn], interval=2,
                        stdout="burned %d ms\n" % MS, finalize=True)
        hs = {r["Function"]: e.secs(r, "CPU Time:Total") for r in
              e.rows(res, "-view", "hotspots")}
        e.check("py_burn" in hs, "py_burn is seen in the interpreter run from a deleted file "
                "(the agent log: %s)" % res.agent_log())
        e.check_time(e.db_sampled(res), hs.get("py_burn", 0) * 1e9, MS * 1e6, "py_burn")


if __name__ == "__main__":
    main()
