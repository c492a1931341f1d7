#!/usr/bin/env bash
# LCBench bench: starts cairnd on a fresh temp data dir (no GP suggestion
# deadline, so results do not depend on the machine's load) and runs
# bench/lcbench/lcbench_bench.py against it: Cairn GP_BANDIT + ASHA against
# Optuna 3.1's TPE + Hyperband, TPE and Random + successive halving on the
# LCBench surrogate, then prints the tables. The LCBench data are read from
# ../shared/benchmarks/lcbench (or $CAIRN_LCBENCH_DIR); without them the
# bench says so and exits 2.
#
# Usage: bench/lcbench/run.sh [lcbench_bench.py options, e.g. --seeds 3]
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
case "${1:-}" in
  -h|--help) sed -n '2,11p' "$0"; exec "$PYTHON" "$ROOT/bench/lcbench/lcbench_bench.py" --help ;;
esac
# Fail before starting anything when the data are absent.
"$PYTHON" - "$ROOT" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/bench/lcbench")
import lcbench
if lcbench.find_data_dir() is None:
    sys.exit("run.sh: LCBench data not found (../shared/benchmarks/lcbench or "
             "$CAIRN_LCBENCH_DIR); see bench/lcbench/README.md. Nothing was measured.")
PY
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench-lcbench.XXXXXX")"
trap 'cairn_stop_cairnd; rm -rf "$WORK"' EXIT
# GP suggestions always wait for the model here (no deadline), so results
# do not depend on the machine's load.
cairn_start_cairnd_no_gp_deadline "$BIN" "$WORK"
echo "cairnd at $CAIRN_SERVER, data in $WORK/data" >&2
"$PYTHON" "$ROOT/bench/lcbench/lcbench_bench.py" --server "$CAIRN_SERVER" "$@"
