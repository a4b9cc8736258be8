#!/bin/sh
# SPDX-License-Identifier: MIT
# Python profiling overhead, side by side in one run: bench/python-workload.py (pure Python,
# CPU-bound, about 3 s) plain, under pcollect at 10 ms and 1 ms (collection only:
# -finalization-mode=none, launcher included), under `python -m cProfile` and, where it is
# installed for that interpreter, under `scalene --cpu` (apt-get install python3-scalene gives
# it to /usr/bin/python3). Prints wall and user-time ratios against the plain run (hyperfine,
# min and median of RUNS after a warm-up), then what pcollect recorded and pfinalize's time.
# Usage: bench/python-overhead.sh [BUILD_DIR] [RUNS] [PYTHON]   (default: build 7 /usr/bin/python3.11)
set -eu
BUILD=${1:-build}
RUNS=${2:-7}
PY=${3:-/usr/bin/python3.11}
BUILD=$(cd "$BUILD" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
PCOLLECT=$BUILD/collector/pcollect
PFINALIZE=$BUILD/finalizer/pfinalize
PREPORT=$BUILD/report/preport
APP=$TOP/bench/python-workload.py
for x in "$PCOLLECT" "$PFINALIZE" "$PREPORT" "$PY"; do
	[ -x "$x" ] || { echo "python-overhead: missing '$x'" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "python-overhead: hyperfine not installed (apt-get install hyperfine)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/python-overhead.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

set -- -n plain "$PY $APP" \
	-n pcollect-10ms "$PCOLLECT -collect hotspots -quiet -finalization-mode=none -r $WORK/r10 -- $PY $APP" \
	-n pcollect-1ms "$PCOLLECT -collect hotspots -quiet -finalization-mode=none -knob sampling-interval=1 -r $WORK/r1 -- $PY $APP" \
	-n cProfile "$PY -m cProfile -o $WORK/cprofile.out $APP"
if "$PY" -m scalene --version >/dev/null 2>&1; then
	set -- "$@" -n scalene "$PY -m scalene --cpu --cli --outfile $WORK/scalene.txt $APP"
else
	echo "python-overhead: scalene not installed for $PY: left out" >&2
fi
hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/h.json" --style basic \
	--prepare "rm -rf $WORK/r10 $WORK/r1" "$@" >"$WORK/hyperfine.log" 2>&1 ||
	{ cat "$WORK/hyperfine.log"; exit 1; }

# What the last 1 ms run recorded, and what finalizing it costs.
FIN=$( { /usr/bin/time -f "%e" "$PFINALIZE" -quiet -r "$WORK/r1"; } 2>&1 | tail -1)
SAMPLES=$("$PREPORT" -r "$WORK/r1" -format csv -view summary | grep -m1 '^Collection,Samples,' | cut -d, -f3)
BYTES=$(cat "$WORK"/r1/raw/*.praw | wc -c)

python3 - "$WORK/h.json" "$PY" "$FIN" "$SAMPLES" "$BYTES" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
py, fin, samples, nbytes = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
base = res["plain"]
print("workload: bench/python-workload.py with %s" % py)
print("%-14s %8s %8s %9s %9s %8s %8s" % ("run", "min s", "min x", "median s", "median x",
                                          "user s", "user x"))
for name in ("plain", "pcollect-10ms", "pcollect-1ms", "cProfile", "scalene"):
    if name not in res:
        continue
    r = res[name]
    user = sorted(r["user"])[len(r["user"]) // 2]
    ubase = sorted(base["user"])[len(base["user"]) // 2]
    print("%-14s %8.3f %8.4f %9.3f %9.4f %8.3f %8.4f" % (
        name, r["min"], r["min"] / base["min"], r["median"], r["median"] / base["median"],
        user, user / ubase))
print("pcollect 1 ms: %s samples, %d raw bytes (%.0f B/sample); pfinalize %s s"
      % (samples, nbytes, nbytes / max(1, int(samples or 0)), fin))
PY
