#!/usr/bin/env bash
# Installs what is missing, builds only what the demo runs (cairnd and cairn,
# plus cairn-train for digits; no tests or benchmarks) into build/, starts
# cairnd on an embedded store in a temp dir and tunes the Branin function end
# to end through the cairn CLI (examples/studies/branin.yaml: 30 trials),
# printing each trial as it finishes and the best trial.
#   scripts/demo.sh          the Branin study, driven through the CLI
#   scripts/demo.sh digits   cairnd runs cairn-train as training jobs on the
#                            handwritten digits (examples/studies/digits.yaml)
set -euo pipefail
source "$(dirname "$0")/common.sh"
targets=(cairnd cairn)
[ "${1:-}" = "digits" ] && targets+=(cairn-train)
cairn_setup_targets "${targets[@]}"
cd "$CAIRN_ROOT"

BIN="$CAIRN_BUILD/bin"
DATA="$(mktemp -d "${TMPDIR:-/tmp}/cairn-demo.XXXXXX")"
trap cairn_stop_cairnd EXIT
cairn_start_cairnd "$BIN" "$DATA"
cairn_log "cairnd is serving on $CAIRN_SERVER with its store in $DATA"

if [ "${1:-}" = "digits" ]; then
  # The built-in trainer on a real dataset, run by cairnd as trial jobs.
  STUDY="$("$BIN/cairn" study create --config examples/studies/digits.yaml --name digits-demo)"
  cairn_log "created $STUDY from examples/studies/digits.yaml; cairnd runs cairn-train for each trial"
  "$BIN/cairn" study wait "$STUDY" --interval 1
  "$BIN/cairn" trial list "$STUDY"
  cairn_log "best trial:"
  "$BIN/cairn" study best "$STUDY"
  exit 0
fi

STUDY="$("$BIN/cairn" study create --config examples/studies/branin.yaml --name branin-demo)"
cairn_log "created $STUDY from examples/studies/branin.yaml"

best=""
n=0
while :; do
  suggestion="$("$BIN/cairn" trial suggest "$STUDY" --client-id demo --json 2>/dev/null)"
  evaluated="$(printf '%s' "$suggestion" | /usr/bin/python3 examples/objectives/branin.py)"
  [ -z "$evaluated" ] && break
  while read -r id loss; do
    "$BIN/cairn" trial report "$STUDY" "$id" --step 1 "loss=$loss" >/dev/null
    "$BIN/cairn" trial complete "$STUDY" "$id" "loss=$loss" >/dev/null
    n=$((n + 1))
    if [ -z "$best" ] || /usr/bin/python3 -c "import sys; sys.exit(0 if $loss < $best else 1)"; then
      best="$loss"
    fi
    printf 'trial %2d  loss %-10.5f best %.5f\n' "$n" "$loss" "$best"
  done <<<"$evaluated"
done

cairn_log "study finished after $n trials (the known optimum is 0.397887); best trial:"
"$BIN/cairn" study best "$STUDY"
"$BIN/cairn" study list
