#!/usr/bin/env bash
# Restart benchmark: cairnd restarted on stores of 2,000 and 200,000 trials
# (written straight through the store layer), time to serving and resident
# memory side by side with their ratios. Target: both ratios <= 2x.
# See restart_bench.py for what is measured.
#
# Usage: bench/restart/run.sh [--before PATH_TO_OLD_CAIRND] [--rounds N]
#                             [--small TRIALS] [--large TRIALS] [--studies N]
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd cairn_bench_restart_fill
exec "$PYTHON" "$ROOT/bench/restart/restart_bench.py" --bin "$BIN" "$@"
