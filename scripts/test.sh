#!/usr/bin/env bash
# Installs what is missing, builds into build/ and runs every test via ctest
# (extra arguments go to ctest), then prints passed, failed and skipped with
# each skip's reason (scripts/ci_summary.py; results in $CAIRN_JUNIT, default
# build/ctest-junit.xml). Fails when a test failed or skipped for a reason
# .ci/allowed_skips does not list.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cairn_setup
junit="${CAIRN_JUNIT:-$CAIRN_BUILD/ctest-junit.xml}"
cd "$CAIRN_BUILD"
rc=0
cairn_ctest "$junit" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 600 "$@" || rc=$?
"$CAIRN_ROOT/scripts/ci_summary.py" --label tests "$junit" || rc=1
exit "$rc"
