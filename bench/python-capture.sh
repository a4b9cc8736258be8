#!/bin/sh
# SPDX-License-Identifier: MIT
# Cost of one Python capture (pyagent_capture) and of one guarded read, per installed CPython.
# Usage: bench/python-capture.sh [BUILD_DIR]   (default: build); needs the unit tests built.
set -e
build=${1:-build}
for t in python-agent python-walk; do
	exe="$build/tests/unit/test-$t"
	[ -x "$exe" ] || { echo "python-capture: cannot find '$exe': build the unit tests" >&2; exit 1; }
done
echo "guarded read (process_vm_readv on our own pid):"
"$build/tests/unit/test-python-agent" | grep -o "guarded read:.*bytes" | sed 's/^/  /'
echo "capture at 9 Python frames deep, every code object already described:"
"$build/tests/unit/test-python-walk" | grep -E "^  python 3|capture cost" | sed 's/^ *//; s/^/  /'
