#!/bin/sh
# SPDX-License-Identifier: MIT
# Collector overhead, side by side in one run: a CPU-bound C program (tests/progs/cpu-split,
# about 3 s) plain, under pcollect at 10 ms and 1 ms (collection only: -finalization-mode=none),
# at 1 ms with -knob sampling-clock=task-clock, and under `perf record -F 100 -g` and
# `perf record -F 1000 -g`. Prints wall and user-time ratios against the plain run
# (hyperfine means of 5+ runs after a warm-up), and raw bytes per sample for pcollect and perf.
# The program runs in its "fixed" mode: a fixed amount of work, not a budget of CPU time.
# Usage: bench/collector-overhead.sh [BUILD_DIR] [RUNS]
set -eu
BUILD=${1:-build}
RUNS=${2:-7}
BUILD=$(cd "$BUILD" && pwd)
PCOLLECT=$BUILD/collector/pcollect
PROG=$BUILD/tests/progs/cpu-split
DUMP=$BUILD/tests/progs/raw-dump
ROUNDS=8
for x in "$PCOLLECT" "$PROG" "$DUMP"; do
	[ -x "$x" ] || { echo "collector-overhead: missing '$x': build first" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "collector-overhead: hyperfine not installed (apt-get install hyperfine)" >&2; exit 1; }
command -v perf >/dev/null || { echo "collector-overhead: perf not installed (apt-get install linux-perf)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/collector-overhead.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/h.json" --style basic \
	--prepare true --prepare "rm -rf $WORK/r10" --prepare "rm -rf $WORK/r1" \
	--prepare "rm -rf $WORK/rt1" --prepare "rm -f $WORK/perf.data" \
	--prepare "rm -f $WORK/perf1000.data" \
	-n plain "$PROG $ROUNDS 40 fixed" \
	-n pcollect-10ms \
	"$PCOLLECT -collect hotspots -quiet -finalization-mode=none -r $WORK/r10 -- $PROG $ROUNDS 40 fixed" \
	-n pcollect-1ms \
	"$PCOLLECT -collect hotspots -quiet -finalization-mode=none -knob sampling-interval=1 -r $WORK/r1 -- $PROG $ROUNDS 40 fixed" \
	-n pcollect-1ms-tc \
	"$PCOLLECT -collect hotspots -quiet -finalization-mode=none -knob sampling-interval=1 -knob sampling-clock=task-clock -r $WORK/rt1 -- $PROG $ROUNDS 40 fixed" \
	-n perf-F100-g "perf record -q -F 100 -g -o $WORK/perf.data -- $PROG $ROUNDS 40 fixed" \
	-n perf-F1000-g "perf record -q -F 1000 -g -o $WORK/perf1000.data -- $PROG $ROUNDS 40 fixed" \
	>"$WORK/hyperfine.log" 2>&1 || { cat "$WORK/hyperfine.log"; exit 1; }

bytes_per_sample() { # result dir -> "bytes samples"
	total=0; samples=0
	for f in "$1"/raw/*.praw; do
		total=$((total + $(stat -c %s "$f")))
		samples=$((samples + $("$DUMP" "$f" | grep -c '"type":"sample"')))
	done
	echo "$total $samples"
}
set -- $(bytes_per_sample "$WORK/r10"); B10=$1; S10=$2
set -- $(bytes_per_sample "$WORK/r1"); B1=$1; S1=$2
set -- $(bytes_per_sample "$WORK/rt1"); BT=$1; ST=$2
PB=$(stat -c %s "$WORK/perf.data")
PS=$(perf report -D -i "$WORK/perf.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' || true)
PB1=$(stat -c %s "$WORK/perf1000.data")
PS1=$(perf report -D -i "$WORK/perf1000.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' || true)

python3 - "$WORK/h.json" "$B10" "$S10" "$B1" "$S1" "$BT" "$ST" "$PB" "$PS" "$PB1" "$PS1" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
b10, s10, b1, s1, bt, st, pb, ps, pb1, ps1 = map(int, sys.argv[2:])
base = res["plain"]
# The machine is shared: the minimum and the median resist other jobs better than the mean.
print("%-16s %8s %8s %8s %8s %8s %8s" % ("run", "min s", "min x", "median s", "median x",
                                         "user s", "user x"))
for name in ("plain", "pcollect-10ms", "pcollect-1ms", "pcollect-1ms-tc", "perf-F100-g",
             "perf-F1000-g"):
    r = res[name]
    print("%-16s %8.3f %8.4f %8.3f %8.4f %8.3f %8.4f" % (
        name, r["min"], r["min"] / base["min"], r["median"], r["median"] / base["median"],
        r["user"], r["user"] / base["user"]))
print()
print("raw data: pcollect 10 ms %d bytes / %d samples = %.1f B/sample" % (b10, s10, b10 / max(s10, 1)))
print("raw data: pcollect 1 ms  %d bytes / %d samples = %.1f B/sample" % (b1, s1, b1 / max(s1, 1)))
print("raw data: pcollect 1 ms task-clock %d bytes / %d samples = %.1f B/sample" % (bt, st, bt / max(st, 1)))
print("raw data: perf -F 100 -g %d bytes / %d samples = %.1f B/sample" % (pb, ps, pb / max(ps, 1)))
print("raw data: perf -F 1000 -g %d bytes / %d samples = %.1f B/sample" % (pb1, ps1, pb1 / max(ps1, 1)))
PY
