#!/usr/bin/env bash
# Python SDK reporting cost against the C++ client, in the same run: starts
# cairnd on a fresh temp data dir, installs ./python (pip, offline) into a
# temp dir, reports POINTS points with each (C++: cairn_bench_report, one
# streamed message per point; Python: Trial.report() in a loop + flush),
# ROUNDS interleaved rounds, and prints the CPU per point of both and the
# median ratio. Target: Python <= 2x the C++ client.
#
# Usage: bench/sdk/run.sh [--points N] [--rounds N]
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
POINTS=100000
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --points) POINTS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in "$POINTS" "$ROUNDS"; do
  case "$v" in
    ''|*[!0-9]*|0) echo "run.sh: --points and --rounds take positive integers, got '$v'" >&2; exit 2 ;;
  esac
done
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd cairn_bench_report

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench-sdk.XXXXXX")"
trap 'cairn_stop_cairnd; rm -rf "$WORK"' EXIT
"$PYTHON" -m pip install -q --no-build-isolation --no-deps --no-index \
  --disable-pip-version-check --target "$WORK/site" "$ROOT/python" >/dev/null 2>&1 \
  || { echo "run.sh: pip install ./python failed" >&2; exit 1; }
export PYTHONPATH="$WORK/site"
cairn_start_cairnd "$BIN" "$WORK"
echo "cairnd at $CAIRN_SERVER; $POINTS points per client per round" >&2

: >"$WORK/rounds.txt"
for r in $(seq 1 "$ROUNDS"); do
  trial="$("$PYTHON" "$ROOT/bench/sdk/sdk_report_bench.py" --make-trial | awk '{ print $2 }')"
  cpp="$("$BIN/cairn_bench_report" --server "$CAIRN_SERVER" --trial "$trial" \
    --points "$POINTS" | awk '$1 == "cpp_report_cpu_us_per_point" { print $2 }')"
  py="$("$PYTHON" "$ROOT/bench/sdk/sdk_report_bench.py" --points "$POINTS" |
    tee "$WORK/py.txt" | awk '$1 == "py_report_cpu_us_per_point" { print $2 }')"
  call="$(awk '$1 == "py_report_call_us_per_point" { print $2 }' "$WORK/py.txt")"
  echo "$r $cpp $py $call" | tee -a "$WORK/rounds.txt" |
    awk '{ printf "round %d: C++ %.2f us/point, Python %.2f us/point (report() call %.2f us), %.2fx\n", $1, $2, $3, $4, $3 / $2 }' >&2
done
# Medians over the rounds (mawk has no asort: sort each column).
median() { awk "{ print $1 }" "$WORK/rounds.txt" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cpp_med="$(median '$2')"
py_med="$(median '$3')"
ratio_med="$(median '$3 / $2')"
printf 'cpp_report_cpu_us_per_point %.2f\n' "$cpp_med"
printf 'py_report_cpu_us_per_point %.2f\n' "$py_med"
awk -v r="$ratio_med" -v n="$ROUNDS" 'BEGIN {
  printf "py_over_cpp_cpu_ratio %.2f (median of %d rounds; target <= 2: %s)\n", r, n, (r <= 2 ? "met" : "NOT met") }'
