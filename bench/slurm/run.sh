#!/usr/bin/env bash
# Slurm executor benchmark: the same studies run by cairnd --executor=local
# and --executor=slurm (on a two-node cluster from scripts/slurm-local.sh,
# started in a temp dir and stopped at the end), side by side with ratios:
#  - dispatch overhead: seconds per trial with one trial at a time (5 trials);
#  - throughput: trials per minute with 50 short trials, 4 at a time.
# Usage: bench/slurm/run.sh [--trials N] [--sequential N]
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd
CLUSTER="$(mktemp -d /tmp/cairn-slurm-bench-XXXXXX)"
trap '"$ROOT/scripts/slurm-local.sh" stop "$CLUSTER" >/dev/null; rm -rf "$CLUSTER"' EXIT
eval "$("$ROOT/scripts/slurm-local.sh" start "$CLUSTER")"
"$PYTHON" "$ROOT/bench/slurm/slurm_bench.py" --bin "$BIN" --root "$ROOT" "$@"
