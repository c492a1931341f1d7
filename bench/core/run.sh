#!/usr/bin/env bash
# Core benchmark: starts cairnd on a fresh temp data dir (durable writes, the
# default), measures it with cairn_bench_core, measures Optuna 3 with RDB
# storage on SQLite in the same run, and prints both with the ratios.
# Target: Cairn >= 20x Optuna on both figures.
#
# Usage: bench/core/run.sh [--duration SECONDS] [--clients "1 8 32"]
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
DURATION=5
CLIENTS="1 8 32"
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --clients) CLIENTS="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for b in cairnd cairn_bench_core; do
  [ -x "$BIN/$b" ] || { echo "run.sh: $BIN/$b not built (cmake --build build --target $b)" >&2; exit 1; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench-core.XXXXXX")"
source "$ROOT/scripts/common.sh"
trap 'cairn_stop_cairnd; rm -rf "$WORK"' EXIT
cairn_start_cairnd "$BIN" "$WORK"
SERVER="$CAIRN_SERVER"

echo "cairnd at $SERVER, data in $WORK/data; ${DURATION}s per figure" >&2
# shellcheck disable=SC2086
"$BIN/cairn_bench_core" --server "$SERVER" --duration "$DURATION" \
  --clients $CLIENTS | tee "$WORK/cairn.txt" >&2
cairn_stop_cairnd
"$PYTHON" "$ROOT/bench/core/optuna_bench.py" --duration "$DURATION" \
  --dir "$WORK" | tee "$WORK/optuna.txt" >&2

cat "$WORK/cairn.txt" "$WORK/optuna.txt" | awk -v clients="$CLIENTS" '
  { v[$1] = $2 }
  function row(label, cairn, optuna,   r) {
    r = (optuna > 0) ? cairn / optuna : 0
    printf "%-46s %12.1f/s %12.1f/s %9.1fx\n", label, cairn, optuna, r
  }
  END {
    printf "%-46s %14s %14s %10s\n", "figure (durable writes)", "Cairn",
           "Optuna+SQLite", "ratio"
    n = split(clients, cs, " ")
    for (i = 1; i <= n; i++) {
      k = (cs[i] == 1) ? "" : "_c" cs[i]
      row("suggest+complete vs ask+tell, " cs[i] " client(s)",
          v["cairn_suggest_complete_per_s" k], v["optuna_ask_tell_per_s"])
    }
    for (i = 1; i <= n; i++) {
      k = (cs[i] == 1) ? "" : "_c" cs[i]
      row("ReportMeasurements stream vs report, " cs[i] " client(s)",
          v["cairn_stream_measurements_per_s" k], v["optuna_report_per_s"])
    }
    row("AddTrialMeasurement (unary) vs trial.report",
        v["cairn_add_measurement_per_s"], v["optuna_report_per_s"])
    printf "(Optuna %s, one process; every Optuna figure is single-worker)\n",
           v["optuna_version"]
    rt = v["cairn_suggest_complete_per_s"] / v["optuna_ask_tell_per_s"]
    ms = v["cairn_stream_measurements_per_s"] / v["optuna_report_per_s"]
    printf "target >= 20x with one client: round trips %.1fx (%s), measurements %.1fx (%s)\n",
           rt, (rt >= 20 ? "met" : "NOT met"), ms, (ms >= 20 ? "met" : "NOT met")
  }'
