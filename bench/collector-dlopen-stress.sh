#!/bin/sh
# SPDX-License-Identifier: MIT
# The full dlopen/dlclose stress test: 20 runs of 5 s of CPU time a thread at 1 ms (CI runs
# 3 x 1 s), each checked for hangs, crashes, clean streams and every thread's CPU time
# accounted for, by tests/e2e/collect-dlopen-stress.py.
# Usage: bench/collector-dlopen-stress.sh [BUILD_DIR] [RUNS] [SECONDS]
set -eu
BUILD=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
PCOLLECT_BUILD=$BUILD PCOLLECT_SOURCE=$SRC STRESS_RUNS=${2:-20} STRESS_SECONDS=${3:-5} \
	exec python3 "$SRC/tests/e2e/collect-dlopen-stress.py"
