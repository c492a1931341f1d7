#!/usr/bin/env bash
# Container jobs against process jobs, side by side in one run and one
# cairnd: the same trainer (tests/containers/trainer.py, reporting one
# metric and exiting) as a host process and in the test image
# (tests/containers/ensure_image.sh builds it once per machine):
#  - start overhead: seconds per trial with one trial at a time;
#  - throughput: trials per minute of 50 short trials, 2 at a time.
# Usage: bench/containers/run.sh [--trials N] [--sequential N]
# Env: CAIRN_BIN_DIR (default build/bin).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd
"$ROOT/tests/containers/ensure_image.sh"
CAIRN_BIN_DIR="$BIN" /usr/bin/python3 "$ROOT/bench/containers/container_bench.py" "$@"
