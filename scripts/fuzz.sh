#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (preset $CAIRN_FUZZ_PRESET, default
# fuzz, into build-<preset>/; CI uses the asan preset, which builds them too) and
# fuzzes each for SECONDS (default 30), starting from a copy of its seed corpus
# (fuzz/corpus/<name>/, left unchanged) and its regression inputs
# (fuzz/regressions/<name>/). Prints per target the executions and, for a
# crash, the artifact path; exits non-zero when any target crashed. A crash
# input worth keeping goes to fuzz/regressions/<name>/ with the fix.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]  (targets without _fuzzer)
set -uo pipefail
source "$(dirname "$0")/common.sh"

SECONDS_EACH="${1:-30}"
shift $(($# > 0 ? 1 : 0))
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  mapfile -t TARGETS < <(sed -nE 's/^cairn_add_fuzzer\(NAME ([a-z_]+) .*/\1/p' \
    "$CAIRN_ROOT/fuzz/CMakeLists.txt")
fi

cairn_install_packages "${CAIRN_CI_PACKAGES[@]}"
PRESET="${CAIRN_FUZZ_PRESET:-fuzz}"
BUILD="$CAIRN_ROOT/build-$PRESET"
cairn_build_preset "$PRESET" "$BUILD" "${TARGETS[@]/%/_fuzzer}" || exit 1

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1"
export LSAN_OPTIONS="suppressions=$CAIRN_ROOT/cmake/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

status=0
declare -a summary=()
for name in "${TARGETS[@]}"; do
  corpus="$WORK/corpus/$name" artifacts="$WORK/artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  cp "$CAIRN_ROOT/fuzz/corpus/$name/"* "$corpus/" 2>/dev/null
  cp "$CAIRN_ROOT/fuzz/regressions/$name/"* "$corpus/" 2>/dev/null
  log="$WORK/$name.log"
  cairn_log "fuzzing $name for ${SECONDS_EACH}s"
  "$BUILD/fuzz/${name}_fuzzer" "$corpus" \
    -max_total_time="$SECONDS_EACH" -timeout=30 -rss_limit_mb=4096 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    >"$log" 2>&1
  rc=$?
  execs="$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -1)"
  if [ "$rc" -eq 0 ]; then
    summary+=("$(printf '%-20s ok       %10s execs' "$name" "${execs:-?}")")
    continue
  fi
  status=1
  # Keep the artifact past the temp dir's removal.
  keep="$BUILD/artifacts/$name"
  mkdir -p "$keep"
  cp "$artifacts/"* "$keep/" 2>/dev/null
  artifact="$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -1)"
  [ -n "$artifact" ] && artifact="$keep/$(basename "$artifact")"
  tail -60 "$log"
  summary+=("$(printf '%-20s CRASHED  %10s execs  %s' "$name" "${execs:-?}" \
    "${artifact:-(no artifact; exit $rc)}")")
done

cairn_log "fuzzing summary (${SECONDS_EACH}s per target)"
printf '  %s\n' "${summary[@]}"
exit $status
