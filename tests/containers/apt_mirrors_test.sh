#!/bin/bash
# apt_mirrors.sh over sample apt configurations: a Debian installed from its
# installer (its mirror only in the one-line sources.list, next to the disc's
# cdrom: entry), a cloud image (deb822 debian.sources only), both at once,
# third-party and disabled entries, and none at all.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0

# check NAME ROOT EXPECTED: apt_mirrors.sh bookworm ROOT prints EXPECTED.
check() {
  local got
  if ! got="$("$here/apt_mirrors.sh" bookworm "$2" 2>&1)"; then
    echo "FAIL $1: exit 1: $got"; failures=$((failures + 1)); return
  fi
  if [ "$got" != "$3" ]; then
    echo "FAIL $1:"; diff <(echo "$3") <(echo "$got") || true
    failures=$((failures + 1)); return
  fi
  echo "ok   $1"
}

# check_refused NAME ROOT FILES: apt_mirrors.sh exits 1 naming the FILES it
# read.
check_refused() {
  local got rc=0
  got="$("$here/apt_mirrors.sh" bookworm "$2" 2>&1)" || rc=$?
  if [ "$rc" -ne 1 ] || [[ "$got" != *"no Debian mirror for bookworm"*"files read: $3" ]]; then
    echo "FAIL $1: exit $rc: $got"; failures=$((failures + 1)); return
  fi
  echo "ok   $1 (refused: $got)"
}

installer="$tmp/installer/etc/apt"
mkdir -p "$installer"
cat >"$installer/sources.list" <<'LIST'
#

# deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD Binary-1 with firmware 20240210-11:28]/ bookworm contrib main non-free-firmware

deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD Binary-1 with firmware 20240210-11:28]/ bookworm contrib main non-free-firmware

deb http://ftp.fr.debian.org/debian/ bookworm main non-free-firmware
deb-src http://ftp.fr.debian.org/debian/ bookworm main non-free-firmware

deb http://security.debian.org/debian-security bookworm-security main non-free-firmware
deb-src http://security.debian.org/debian-security bookworm-security main non-free-firmware

# bookworm-updates, to get updates before a point release is made;
# see https://www.debian.org/doc/manuals/debian-reference/ch02.en.html#_updates_and_backports
deb http://ftp.fr.debian.org/debian/ bookworm-updates main non-free-firmware   # trailing comment
LIST
check installer-sources.list "$tmp/installer" \
"deb http://ftp.fr.debian.org/debian/ bookworm main
deb http://security.debian.org/debian-security bookworm-security main
deb http://ftp.fr.debian.org/debian/ bookworm-updates main"

cloud="$tmp/cloud/etc/apt/sources.list.d"
mkdir -p "$cloud"
cat >"$cloud/debian.sources" <<'SOURCES'
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
check cloud-debian.sources "$tmp/cloud" \
"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main"

# Both ways, with what must be left out: a disabled stanza, deb-src only, a
# third-party repository on the suite without main, an inline key, a file
# apt ignores, another release, and a mirror listed twice.
mixed="$tmp/mixed/etc/apt"
mkdir -p "$mixed/sources.list.d"
cat >"$mixed/sources.list" <<'LIST'
deb [ arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] http://mirror.example/debian bookworm main contrib
  deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian trixie main
LIST
cat >"$mixed/sources.list.d/debian.sources" <<'SOURCES'
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main contrib

Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb-src
URIs: http://src-only.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://inline-key.example/debian
Suites: bookworm-backports
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mDMEZ0000000000
 -----END PGP PUBLIC KEY BLOCK-----
SOURCES
cat >"$mixed/sources.list.d/docker.sources" <<'SOURCES'
Types: deb
URIs: https://download.docker.example/linux/debian
Suites: bookworm
Components: stable
SOURCES
echo "deb http://ignored.example/debian bookworm main" \
  >"$mixed/sources.list.d/old.list.disabled-by-admin"
echo "deb [signed-by=/etc/apt/keyrings/x.gpg] http://extra.example/debian bookworm-updates main" \
  >"$mixed/sources.list.d/extra.list"
check mixed "$tmp/mixed" \
"deb http://deb.debian.org/debian bookworm main
deb http://inline-key.example/debian bookworm-backports main
deb [ arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] http://mirror.example/debian bookworm main
deb [signed-by=/etc/apt/keyrings/x.gpg] http://extra.example/debian bookworm-updates main"

mkdir -p "$tmp/empty/etc/apt"
check_refused no-sources "$tmp/empty" none
other="$tmp/other/etc/apt"
mkdir -p "$other"
echo "deb http://deb.debian.org/debian trixie main" >"$other/sources.list"
echo "deb cdrom:[Debian 12]/ bookworm main" >>"$other/sources.list"
check_refused other-release-and-cdrom "$tmp/other" "$other/sources.list"

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"
