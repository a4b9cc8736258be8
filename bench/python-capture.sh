#!/bin/sh
# SPDX-License-Identifier: MIT
# Cost of one Python capture (pyagent_capture) and of one guarded read, per CPython found.
# Usage: bench/python-capture.sh [BUILD_DIR]   (default: build); needs the unit tests built.
#
# The capture is timed in-process by tests/unit/test-python-walk, from a C function Python
# calls 9 frames deep and again 20 frames deep, every code object already described: CPU time
# of the thread over 5,000 captures each (other jobs on the machine do not inflate it), and
# the system calls one capture makes. The interpreters are those tests/pythons.py finds (PATH,
# pyenv, PCOLLECT_TEST_PYTHONS: ./scripts/dev test sets it to Debian unstable's 3.14 and 3.15
# wrappers, in BUILD_DIR/pythons).
set -e
build=${1:-build}
for t in python-agent python-walk; do
	exe="$build/tests/unit/test-$t"
	[ -x "$exe" ] || { echo "python-capture: cannot find '$exe': build the unit tests" >&2; exit 1; }
done
if [ -z "${PCOLLECT_TEST_PYTHONS:-}" ] && [ -d "$build/pythons" ]; then
	PCOLLECT_TEST_PYTHONS=$(ls -d "$build"/pythons/python3.* 2>/dev/null | paste -sd: -)
	export PCOLLECT_TEST_PYTHONS
fi
echo "guarded read (process_vm_readv on our own pid):"
"$build/tests/unit/test-python-agent" | grep -o "guarded read:.*bytes" | sed 's/^/  /'
echo "capture, every code object already described (CPU time a capture):"
"$build/tests/unit/test-python-walk" | grep -E "^  python 3|capture cost" | sed 's/^ *//; s/^/  /'
