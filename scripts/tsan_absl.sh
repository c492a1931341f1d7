#!/usr/bin/env bash
# Builds Abseil's shared libraries with ThreadSanitizer, from Debian's own
# source package of the installed libabsl-dev (same version, patches, options
# and SONAMEs), into DIR/lib. The tsan tests run with LD_LIBRARY_PATH=DIR/lib.
#
# Why: absl::Mutex lives in libabsl_synchronization.so. Debian builds it
# without TSan, so TSan cannot see its locks and reports every access guarded
# by an absl::Mutex as a race. Built with -fsanitize=thread, absl's mutex
# calls TSan's mutex annotations and those reports go away.
#
# Usage: scripts/tsan_absl.sh DIR    (idempotent: does nothing if DIR/lib is there)
set -euo pipefail
dir="$(mkdir -p "$1" && cd "$1" && pwd)"
[ -e "$dir/lib/libabsl_synchronization.so" ] && exit 0
version="$(dpkg-query -W -f='${Version}' libabsl-dev)"
apt_dir="$dir/apt"
mkdir -p "$apt_dir/lists/partial" "$dir/src"

# deb-src entries mirroring the system's deb entries, in a private apt state
# (the system's apt configuration is left alone).
sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/*.sources \
  >"$apt_dir/debian-src.sources" 2>/dev/null || true
grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | sed 's/^deb /deb-src /' \
  >"$apt_dir/src.list" || true
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/src.list" -o "Dir::Etc::SourceParts=$apt_dir"
          -o "Dir::State::Lists=$apt_dir/lists" -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" update -qq >/dev/null 2>&1 || true
(cd "$dir/src" && apt-get "${apt_opts[@]}" source --download-only -qq "abseil=$version" >/dev/null)
rm -rf "$dir/src/abseil"
# apt checked the .dsc against the signed Sources index; the .dsc's own
# signature needs the uploader's key, which a fresh machine lacks.
dpkg-source --no-check -x "$dir/src"/abseil_*.dsc "$dir/src/abseil" >/dev/null

# Debian's own configuration (debian/rules: C++17, shared), plus TSan.
cmake -S "$dir/src/abseil" -B "$dir/build" -DCMAKE_CXX_STANDARD=17 \
  -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DABSL_PROPAGATE_CXX_STD=ON >"$dir/configure.log" 2>&1
cmake --build "$dir/build" --target synchronization -j "$(nproc)" >"$dir/build.log" 2>&1 \
  || { tail -20 "$dir/build.log"; exit 1; }
mkdir -p "$dir/lib.tmp"
find "$dir/build" -name 'libabsl_*.so*' -exec cp -P {} "$dir/lib.tmp/" \;
mv "$dir/lib.tmp" "$dir/lib"
echo "ThreadSanitizer Abseil $version: $(ls "$dir/lib" | grep -c '\.so\.[0-9]*$') libraries in $dir/lib"
