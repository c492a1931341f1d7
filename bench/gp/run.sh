#!/usr/bin/env bash
# GP_BANDIT bench: starts cairnd on a fresh temp data dir and runs
# bench/gp/gp_bench.py against it (Cairn GP_BANDIT, QUASI_RANDOM_SEARCH and
# RANDOM_SEARCH through gRPC; Optuna TPE, multivariate TPE, CMA-ES and
# NSGA-II in the same run), then prints the table.
#
# Usage: bench/gp/run.sh [gp_bench.py options, e.g. --seeds 10 --parts regret]
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
case "${1:-}" in
  -h|--help) sed -n '2,8p' "$0"; exec "$PYTHON" "$ROOT/bench/gp/gp_bench.py" --help ;;
esac
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench-gp.XXXXXX")"
trap 'cairn_stop_cairnd; rm -rf "$WORK"' EXIT
# GP suggestions always wait for the model here (no deadline), so results
# do not depend on the machine's load.
cairn_start_cairnd_no_gp_deadline "$BIN" "$WORK"
SERVER="$CAIRN_SERVER"
echo "cairnd at $SERVER, data in $WORK/data" >&2
"$PYTHON" "$ROOT/bench/gp/gp_bench.py" --server "$SERVER" "$@"
