#!/usr/bin/env bash
# Installs what the benchmarks need (Debian's python3-optuna, python3-cmaes and
# python3-torch for the peers measured in the same run), builds into build/
# and runs every benchmark, each printing its ratios against the peers.
# Usage: scripts/bench.sh [core|jobs|train|gp|monitoring|restart|security|sdk|slurm|containers ...]   (default: all)
set -euo pipefail
source "$(dirname "$0")/common.sh"
cairn_setup python3-optuna python3-cmaes python3-torch
cd "$CAIRN_ROOT"
which=("$@")
[ ${#which[@]} -eq 0 ] && which=(core jobs train gp monitoring restart security sdk slurm containers)
for b in "${which[@]}"; do
  cairn_log "benchmark: $b"
  case "$b" in
    core) bench/core/run.sh ;;
    jobs) "$CAIRN_BUILD/bin/cairn_bench_jobs" ;;
    train) bench/train/run.sh "$CAIRN_BUILD" ;;
    gp) [ -x bench/gp/run.sh ] && bench/gp/run.sh || cairn_log "bench/gp/run.sh missing" ;;
    monitoring) [ -x bench/monitoring/run.sh ] && bench/monitoring/run.sh || cairn_log "bench/monitoring/run.sh missing" ;;
    restart) CAIRN_BIN_DIR="$CAIRN_BUILD/bin" bench/restart/run.sh ;;
    security) CAIRN_BIN_DIR="$CAIRN_BUILD/bin" bench/security/run.sh ;;
    sdk) CAIRN_BIN_DIR="$CAIRN_BUILD/bin" bench/sdk/run.sh ;;
    slurm) CAIRN_BIN_DIR="$CAIRN_BUILD/bin" bench/slurm/run.sh ;;
    containers) CAIRN_BIN_DIR="$CAIRN_BUILD/bin" bench/containers/run.sh ;;
    *) echo "bench.sh: unknown benchmark $b" >&2; exit 2 ;;
  esac
done
