#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summary of meson test runs for ./scripts/dev: every skipped test with the reason it printed,
every failed one with the check that failed and the end of its output (a CI log then says why
without the build directory), from each build directory's meson-logs/testlog.json.

usage: test-summary.py LABEL=BUILD_DIR...
"""
import json
import os
import re
import sys

REASON = re.compile(r"^(?:SKIP: |skipped: )(.*)$", re.M)
FAILED = re.compile(r"^(?:FAIL: |failed: )(.*)$", re.M)
TAIL = 15  # lines of a failed test's output printed
SLOW = 15  # seconds over which a test of the first build is named (docs/testing.md)


def runs(path):
    """The tests of one testlog.json: (name, result, reason or last output line, seconds, the
    last lines of its output)."""
    out = []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            text = (d.get("stdout") or "") + (d.get("stderr") or "")
            m = (REASON if d["result"] == "SKIP" else FAILED).findall(text) or REASON.findall(text)
            last = [l for l in text.strip().splitlines() if l.strip()]
            why = m[-1] if m else (last[-1] if last else "no output")
            name = d["name"].split(" / ", 1)[-1]
            out.append((name, d["result"], why.strip(), d.get("duration", 0.0), last[-TAIL:]))
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    skipped, failed, total, times = [], [], 0, []
    for arg in argv[1:]:
        label, _, build = arg.partition("=")
        path = os.path.join(build, "meson-logs", "testlog.json")
        if not os.path.exists(path):
            continue
        secs, slow = 0.0, []
        for name, result, why, took, tail in runs(path):
            total += 1
            secs += took
            if took > SLOW and label == argv[1].partition("=")[0]:
                slow.append("%s %.0f s" % (name, took))
            if result == "SKIP":
                skipped.append((label, name, why))
            elif result not in ("OK", "EXPECTEDFAIL"):
                failed.append((label, name, result, why, tail))
        times.append("%s %.0f s%s" % (label, secs, " (over %d s: %s)" % (SLOW, ", ".join(slow))
                                            if slow else ""))
    print("dev: %d tests run, %d skipped, %d failed" % (total, len(skipped), len(failed)))
    # docs/testing.md: a new e2e test takes at most SLOW s (the plain build's, the first given)
    print("dev: the tests' durations summed: " + "; ".join(times))
    for label, name, why in skipped:
        print("dev:   skipped %s %s: %s" % (label, name, why))
    for label, name, result, why, tail in failed:
        print("dev:   %s %s %s: %s" % (result.lower(), label, name, why))
        for line in tail:
            print("dev:     | " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
