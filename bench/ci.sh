#!/usr/bin/env bash
# CI's bench phase (.ci/run): the headline benchmarks in a short form, each
# reduced to ratios measured in this run on this machine (Cairn against
# Optuna, or against the machine's own floor), each ratio checked against
# its threshold in bench/ci_thresholds.txt (which says why it has that
# value). Prints every bench's own output, then one line per ratio:
#   ci-bench NAME VALUE OP THRESHOLD ok|FAILED
# and exits 1 if a ratio misses its threshold or a bench gave none.
# About 1-2 minutes on 2 cores (72-80 s on the shared VM under other builds).
#
#   core        cairn_bench_core (2 s per figure, 1 and 8 clients, a study of
#               2,000 trials) and optuna_bench.py: round trips and streamed
#               measurements against Optuna, one client against the bound
#               of 2 x (empty RPC + durable append), the large study
#               against a fresh one
#   restart     bench/restart: time to serving and RSS, 40,000 trials
#               against 2,000
#   gp          bench/gp timing at 100 trials: Optuna TPE's ask time over
#               Cairn's GP_BANDIT SuggestTrials
#   jobs        cairn_bench_jobs: the runner's tick over the dispatch
#               latency, a direct AddTrialMeasurement over a hypertune
#               report's collection
#   monitoring  monitoring_overhead_bench: the instrumentation's work per
#               suggest+complete pair over the server's CPU per pair
#
# Usage: bench/ci.sh [NAME...]   (default: all of the above)
# Env: CAIRN_BIN_DIR (default build/bin), PYTHON (default /usr/bin/python3).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
PYTHON="${PYTHON:-/usr/bin/python3}"
THRESHOLDS="$ROOT/bench/ci_thresholds.txt"
case "${1:-}" in -h|--help) sed -n '2,27p' "$0"; exit 0 ;; esac
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd cairn_bench_core cairn_bench_restart_fill \
  cairn_bench_jobs monitoring_overhead_bench || exit 1

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench-ci.XXXXXX")"
trap 'cairn_stop_cairnd; rm -rf "$WORK"' EXIT
# A root cairnd's job user (nobody) must reach its jobs root below.
chmod 711 "$WORK"
RATIOS="$WORK/ratios.txt"
: >"$RATIOS"

# ratio NAME A B: records A / B as ratio NAME ("nan" when either is missing).
ratio() {
  awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN {
    if (a == "" || b == "" || b + 0 <= 0) print n, "nan"
    else printf "%s %.3f\n", n, a / b }' >>"$RATIOS"
}
# kv FILE KEY: the value of FILE's "KEY VALUE" line.
kv() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }
free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

bench_core() {
  local metrics out="$WORK/core.txt" optuna="$WORK/optuna.txt"
  metrics="127.0.0.1:$(free_port)"
  CAIRN_METRICS_LISTEN="$metrics" cairn_start_cairnd "$BIN" "$WORK/core" || return 1
  "$BIN/cairn_bench_core" --server "$CAIRN_SERVER" --duration 2 --clients 1 8 \
    --large-study 2000 --figures round_trips large_study stream floors \
    --fsync-dir "$WORK" --metrics "$metrics" | tee "$out"
  cairn_stop_cairnd
  "$PYTHON" "$ROOT/bench/core/optuna_bench.py" --duration 2 --dir "$WORK" | tee "$optuna"
  local one bound
  one="$(kv "$out" cairn_suggest_complete_per_s)"
  bound="$(awk '$1 == "floor_empty_rpc_us" { r = $2 } $1 == "floor_durable_append_us" { a = $2 }
    END { if (r > 0 && a > 0) printf "%.1f", 1e6 / (2 * (r + a)) }' "$out")"
  ratio core_round_trips_1_vs_optuna "$one" "$(kv "$optuna" optuna_ask_tell_per_s)"
  ratio core_round_trips_8_vs_optuna "$(kv "$out" cairn_suggest_complete_per_s_c8)" \
    "$(kv "$optuna" optuna_ask_tell_per_s)"
  ratio core_one_client_vs_bound "$one" "$bound"
  ratio core_large_study_vs_fresh "$(kv "$out" cairn_suggest_complete_per_s_large)" "$one"
  ratio core_stream_vs_optuna_report "$(kv "$out" cairn_stream_measurements_per_s)" \
    "$(kv "$optuna" optuna_report_per_s)"
}

bench_restart() {
  local out="$WORK/restart.txt"
  "$PYTHON" "$ROOT/bench/restart/restart_bench.py" --bin "$BIN" --small 2000 \
    --large 40000 --studies 4 --rounds 1 | tee "$out"
  # Rows "| Cairn | time to serving | A ms | B ms | Rx | ...": small over
  # large, so that higher is better like every other ratio.
  local row
  for row in "time to serving:restart_time_small_vs_large" \
             "RSS after restart:restart_rss_small_vs_large"; do
    ratio "${row#*:}" $(awk -F'|' -v f="${row%%:*}" '$2 ~ /Cairn/ && $3 ~ f {
      split($4, a, " "); split($5, b, " "); print a[1], b[1] }' "$out")
  done
}

bench_gp() {
  local out="$WORK/gp.txt"
  CAIRN_BIN_DIR="$BIN" "$ROOT/bench/gp/run.sh" --parts timing --timing-sizes 100 \
    --timing-reps 5 --seeds 1 | tee "$out"
  ratio gp_tpe_ask_vs_gp_suggest \
    "$(awk '/100 trials/ && /optuna TPE \(ask\)/ { print $NF }' "$out")" \
    "$(awk '/100 trials/ && /GP_BANDIT \(SuggestTrials RPC\)/ { print $NF }' "$out")"
}

bench_jobs() {
  local out="$WORK/jobs.txt"
  "$BIN/cairn_bench_jobs" --trials 12 | tee "$out"
  ratio jobs_tick_vs_dispatch \
    "$(sed -nE 's/.*runner tick ([0-9.]+) ms.*/\1/p' "$out")" \
    "$(sed -nE 's/^dispatch latency.*median ([0-9.]+) ms.*/\1/p' "$out")"
  ratio jobs_direct_vs_collection \
    "$(sed -nE 's/.*vs direct AddMeasurement ([0-9.]+) us.*/\1/p' "$out")" \
    "$(sed -nE 's/.*hypertune file ([0-9.]+) us.*/\1/p' "$out")"
}

bench_monitoring() {
  local out="$WORK/monitoring.txt"
  "$BIN/monitoring_overhead_bench" --seconds=0.2 --runs=5 | tee "$out"
  # "Record* work per operation: pair A us = P% of server CPU": what the
  # instrumentation costs a suggest+complete pair (timed in a tight loop)
  # over the server's CPU per pair (the fake service's: no work but gRPC),
  # far steadier than the on/off rates on a busy machine.
  ratio monitoring_record_share_of_pair \
    $(sed -nE 's/.*Record\* work per operation: pair ([0-9.]+) us = .*/\1/p' "$out") \
    $(awk '/server CPU per pair/ { print $6; exit }' "$out")
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(core restart gp jobs monitoring)
for name in "${names[@]}"; do
  case "$name" in
    core|restart|gp|jobs|monitoring) ;;
    *) echo "bench/ci.sh: unknown bench '$name'" >&2; exit 2 ;;
  esac
  cairn_log "bench $name"
  start=$SECONDS
  "bench_$name" || echo "bench/ci.sh: bench $name exited with an error"
  echo "bench $name took $((SECONDS - start)) s"
done

# Every threshold of the benches that ran must have its ratio, and meet it.
awk -v ran=" ${names[*]} " '
  FNR == NR { value[$1] = $2; next }
  /^[a-z]/ {
    bench = $1; sub(/_.*/, "", bench)
    if (index(ran, " " bench " ") == 0) next
    v = ($1 in value) ? value[$1] : "nan"
    ok = (v != "nan") && (($2 == ">=") ? (v + 0 >= $3 + 0) : (v + 0 <= $3 + 0))
    printf "ci-bench %-34s %8s %s %-6s %s\n", $1, v, $2, $3, ok ? "ok" : "FAILED"
    failed += !ok
  }
  END { exit failed > 0 }' "$RATIOS" "$THRESHOLDS"
