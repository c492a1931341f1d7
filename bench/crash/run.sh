#!/usr/bin/env bash
# The crash test (tests/integration/crash_test.cc) for longer than its 120 s
# in ctest: kill -9 of cairnd every 0.5-3 s under 4 concurrent clients, every
# acknowledged write verified after each restart. Prints the test's summary
# line (seed, kills, acknowledged writes verified).
# Usage: bench/crash/run.sh [SECONDS (default 600)] [SEED (default random)]
# Env BUILD: the build directory (default build/).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export CAIRN_CRASH_SECONDS=${1:-600}
if [[ -n ${2:-} ]]; then export CAIRN_CRASH_SEED=$2; fi
cmake --build "$BUILD" -j2 --target cairnd crash_test >/dev/null
CAIRN_BIN_DIR="$BUILD/bin" CAIRN_SOURCE_DIR="$ROOT" "$BUILD/tests/crash_test"
