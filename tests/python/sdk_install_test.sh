#!/usr/bin/env bash
# The Python SDK installed exactly as README says, from a fresh clone: the
# block after `<!-- sdk-install -->` in README.md (docs/python-sdk.md shows
# the same block, checked equal) runs in a clone of this checkout's HEAD,
# with Debian's python3 and no network; the venv's python then imports
# cairn, cairn.job and cairn.optuna from the venv, and creates and reads a
# study on a real cairnd.
# Usage: sdk_install_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src="$1" bin="$2"
tmp="$(mktemp -d)"
chmod 755 "$tmp"  # cairnd checks that its job user can reach the jobs root.
cairnd_pid=""
cleanup() {
  [ -n "$cairnd_pid" ] && kill "$cairnd_pid" 2>/dev/null && wait "$cairnd_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The fenced block after the marker in file $1.
block() {
  awk '/^<!-- sdk-install -->$/ {m=1; next}
       m==1 && /^```sh$/ {m=2; next}
       m==2 && /^```$/ {exit}
       m==2 {print}' "$1"
}
readme="$(block "$src/README.md")"
[ -n "$readme" ] || fail "README.md has no <!-- sdk-install --> sh block"
[ "$readme" = "$(block "$src/docs/python-sdk.md")" ] \
  || fail "docs/python-sdk.md's install block differs from README.md's"

git clone -q "$src" "$tmp/cairn" || fail "git clone $src"
cd "$tmp/cairn"
echo "running README's install block in a fresh clone:"
echo "$readme"
PIP_NO_INPUT=1 bash -euo pipefail -c "$readme" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "README's install block failed"; }

"$bin/cairnd" --data-dir "$tmp/data" --listen 127.0.0.1:0 \
  --port-file "$tmp/port" --metrics-listen "" --http-listen "" \
  >"$tmp/cairnd.log" 2>&1 &
cairnd_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { cat "$tmp/cairnd.log"; fail "cairnd did not start"; }
CAIRN_SERVER="127.0.0.1:$(cat "$tmp/port")" \
CAIRN_TOKEN_FILE="$tmp/data/admin.token" \
.venv/bin/python - <<'PY' || fail "the installed SDK does not work"
import os, sys
import cairn, cairn.job, cairn.optuna
where = os.path.realpath(cairn.__file__)
assert where.startswith(os.path.realpath(".venv")), where
study = cairn.Client().create_study("installed", "examples/studies/branin.yaml")
trial = study.suggest(count=1)[0]
trial.complete(loss=1.5)
assert study.trials()[0].final_metrics["loss"] == 1.5
print("cairn from", where, "created", study.name)
PY
echo "PASS: README's install line works from a fresh clone"
