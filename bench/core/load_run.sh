#!/usr/bin/env bash
# Mixed-load bench: starts cairnd on a fresh temp data dir and runs
# bench/core/load_bench.py against it (64 concurrent clients by default,
# GP_BANDIT studies among them), printing p50/p99 per RPC.
#
# Usage: bench/core/load_run.sh [load_bench.py options] [-- cairnd flags]
#   e.g. bench/core/load_run.sh --duration 60 -- --gp-suggest-deadline 0
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
BENCH_ARGS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    -h|--help) sed -n '2,8p' "$0"; exec "$PYTHON" "$ROOT/bench/core/load_bench.py" --help ;;
  esac
  BENCH_ARGS+=("$1")
  shift
done
[ $# -gt 0 ] && shift
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench-load.XXXXXX")"
trap 'cairn_stop_cairnd; rm -rf "$WORK"' EXIT
cairn_start_cairnd "$BIN" "$WORK" "$@"
echo "cairnd at $CAIRN_SERVER (flags: ${*:-none}), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$PYTHON" "$ROOT/bench/core/load_bench.py" --server "$CAIRN_SERVER" "${BENCH_ARGS[@]}"
