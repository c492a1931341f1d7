#!/usr/bin/env bash
# Installs what is missing, builds into build/ and runs every test via ctest.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cairn_setup
cd "$CAIRN_BUILD"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 600 "$@"
