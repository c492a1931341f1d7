#!/usr/bin/env bash
# Takes Optuna's own sampler tests (tests/samplers_tests/test_samplers.py of
# the installed python3-optuna's version) from outside this repository at
# test time, checks it is upstream's file, and applies cairn_sampler.patch
# (CairnSampler added to its sampler lists). Project rule: code from
# elsewhere is never copied into the repository.
#
# Source, in this order:
#  0. this machine's cache of upstream's file, $CAIRN_CACHE_DIR (default
#     ~/.cache/cairn), which a fetch from 1. or 2. fills (as ccache keeps
#     compilations between clones);
#  1. Debian's source package of the installed python3-optuna (apt-get
#     source with a private apt state of deb-src entries mirroring the
#     system's, as scripts/tsan_absl.sh does), unpacked without Debian's
#     patches: its orig tarball is upstream's release.
#  2. $CAIRN_OPTUNA_GIT: a clone of Optuna's repository (bare or not); the
#     file is read at tag v<version>.
# (Functions below run with set -e off, as conditions: each step checks.)
# Either way the file must have UPSTREAM_SHA256 (upstream's v3.1.0 file):
# a different Optuna is refused rather than tested against a patch made for
# another file. When no source gives it, exits 77 (ctest's skip) naming
# each source and why it failed: Debian's mirror may not serve the source
# package, and a machine without network needs a clone or the cache.
#
# Usage: fetch_suite.sh DIR   (idempotent: reuses DIR/test_samplers.py when
# it is there and the patch has not changed since)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(mkdir -p "$1" && cd "$1" && pwd)"
patch_file="$here/cairn_sampler.patch"
UPSTREAM_SHA256=ca67a246424b8f01115d49bc6edf7736236013720f1ce0e572c5740d21fc9bc1
FILE=tests/samplers_tests/test_samplers.py
stamp="$(sha256sum "$patch_file" | cut -d' ' -f1)"
if [ -e "$dir/test_samplers.py" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
deb_version="$(dpkg-query -W -f='${Version}' python3-optuna)"
version="${deb_version%%-*}"
rm -rf "$dir/upstream" && mkdir -p "$dir/upstream/${FILE%/*}"
why=()
cache="${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}/optuna-$version"

from_cache() {
  if ! cp "$cache/test_samplers.py" "$dir/upstream/$FILE" 2>/dev/null; then
    why+=("no cached copy in $cache")
    return 1
  fi
}

from_debian() {
  local apt_dir="$dir/apt" src="$dir/src"
  mkdir -p "$apt_dir/lists/partial" "$src"
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/*.sources \
    >"$apt_dir/debian-src.sources" 2>/dev/null || true
  grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | sed 's/^deb /deb-src /' \
    >"$apt_dir/src.list" || true
  local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/src.list"
                  -o "Dir::Etc::SourceParts=$apt_dir"
                  -o "Dir::State::Lists=$apt_dir/lists" -o "APT::Sandbox::User=root")
  apt-get "${apt_opts[@]}" update -qq >/dev/null 2>&1 || true
  local log="$dir/apt-source.log"
  if ! (cd "$src" && apt-get "${apt_opts[@]}" source --download-only -qq \
          "optuna=$deb_version") >"$log" 2>&1; then
    why+=("Debian source optuna=$deb_version: $(grep -m1 -E '^(E|W):' "$log" || tail -1 "$log")")
    return 1
  fi
  rm -rf "$src/optuna"
  # apt checked the .dsc against the signed Sources index; the .dsc's own
  # signature needs the uploader's key, which a fresh machine lacks.
  if ! dpkg-source --no-check --skip-patches -x "$src"/optuna_*.dsc "$src/optuna" \
         >"$log" 2>&1 || ! cp "$src/optuna/$FILE" "$dir/upstream/$FILE" 2>>"$log"; then
    why+=("Debian source optuna=$deb_version: $(tail -1 "$log")")
    return 1
  fi
}

from_git() {
  if [ -z "${CAIRN_OPTUNA_GIT:-}" ]; then
    why+=("\$CAIRN_OPTUNA_GIT (an Optuna clone) is not set")
    return 1
  fi
  if ! git -C "$CAIRN_OPTUNA_GIT" show "v$version:$FILE" >"$dir/upstream/$FILE" 2>"$dir/git.log"; then
    why+=("$CAIRN_OPTUNA_GIT at v$version: $(head -1 "$dir/git.log")")
    return 1
  fi
}

if ! from_cache && ! from_debian && ! from_git; then
  echo "fetch_suite.sh: cannot get Optuna $version's $FILE:" >&2
  printf '  %s\n' "${why[@]}" >&2
  exit 77
fi
sum="$(sha256sum "$dir/upstream/$FILE" | cut -d' ' -f1)"
if [ "$sum" != "$UPSTREAM_SHA256" ]; then
  echo "fetch_suite.sh: $FILE of Optuna $version has sha256 $sum, not upstream v3.1.0's $UPSTREAM_SHA256" >&2
  exit 1
fi
if [ ! -e "$cache/test_samplers.py" ] && mkdir -p "$cache" 2>/dev/null; then
  cp "$dir/upstream/$FILE" "$cache/test_samplers.py.tmp" &&
    mv "$cache/test_samplers.py.tmp" "$cache/test_samplers.py" || true
fi
(cd "$dir/upstream" && patch -s -p1 --no-backup-if-mismatch) <"$patch_file"
cp "$dir/upstream/$FILE" "$dir/test_samplers.py.tmp"
mv "$dir/test_samplers.py.tmp" "$dir/test_samplers.py"
echo "$stamp" >"$dir/stamp"
