#!/usr/bin/env bash
# Builds cairn's .deb with CPack, installs it with dpkg into a temporary root
# (dpkg --root, maintainer scripts run chrootless with DPKG_ROOT set, so the
# postinst creates the `cairn` user in that root, not on this machine), and
# checks what landed where and that the installed cairnd runs.
# Usage: deb_test.sh BUILD_DIR VERSION
set -euo pipefail
build="$1" version="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  # useradd --prefix and dpkg --root need root: ctest's skip (77), not a pass.
  echo "SKIPPED: installing a .deb into a root needs root (uid $(id -u))"; exit 77
fi

# cpack packages what is built: its preinstall step must not run `make all`,
# a serial rebuild of the whole tree inside this test whenever anything is
# stale (cmake/packaging.cmake sets CMAKE_SKIP_INSTALL_ALL_DEPENDENCY).
if [ -f "$build/Makefile" ] && grep -q '^preinstall: all' "$build/Makefile"; then
  fail "cpack's preinstall builds 'all' first (CMAKE_SKIP_INSTALL_ALL_DEPENDENCY unset)"
fi
start=$SECONDS
(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) \
  || { cat "$tmp/cpack.log"; fail "cpack failed"; }
deb="$(ls "$tmp"/pkg/cairn_*.deb)"
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1)) in $((SECONDS - start)) s"
depends="$(dpkg-deb -f "$deb" Depends)"
for lib in libgrpc++ libprotobuf libabsl libprometheus-cpp adduser; do
  [[ "$depends" == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done

root="$tmp/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
touch "$root/var/lib/dpkg/status"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf 'root:*:19000:0:99999:7:::\n' >"$root/etc/shadow"
printf 'root:*::\n' >"$root/etc/gshadow"
start=$SECONDS
dpkg --root="$root" --force-script-chrootless --force-depends -i "$deb" \
  >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i failed"; }
echo "installed into a temporary root in $((SECONDS - start)) s"
dpkg --root="$root" -s cairn | grep -q '^Status: install ok installed' \
  || fail "dpkg does not list cairn as installed"

for f in usr/bin/cairnd usr/bin/cairn usr/bin/cairn-train \
         usr/lib/systemd/system/cairnd.service \
         usr/share/cairn/grafana/cairn.json \
         usr/share/cairn/grafana/provisioning/dashboards/cairn.yml \
         usr/share/cairn/prometheus/prometheus.yml \
         usr/share/cairn/prometheus/alerts.yml \
         usr/share/cairn/prometheus/targets/cairnd.yml \
         usr/share/cairn/examples/studies/branin.yaml \
         usr/lib/cairn/python/cairn/job.py usr/lib/cairn/python/cairn/v1/study_pb2.py \
         usr/lib/python3/dist-packages/cairn.pth \
         usr/share/doc/cairn/README.md \
         usr/share/doc/cairn/docs/operating.md; do
  [ -e "$root/$f" ] || fail "missing /$f"
done
unit="$root/usr/lib/systemd/system/cairnd.service"
for line in 'User=cairn' 'StateDirectory=cairn' 'ExecStart=/usr/bin/cairnd --data-dir /var/lib/cairn' \
            'NoNewPrivileges=yes' 'ProtectSystem=strict'; do
  grep -q "^$line" "$unit" || fail "cairnd.service lacks '$line'"
done
grep -q '^cairn:x:[0-9]*:[0-9]*::/var/lib/cairn:/usr/sbin/nologin$' "$root/etc/passwd" \
  || fail "postinst did not create the cairn system user: $(cat "$root/etc/passwd")"

got="$("$root/usr/bin/cairnd" --version)"
[ "$got" = "$version" ] || fail "installed cairnd --version printed '$got', expected '$version'"
"$root/usr/bin/cairn" --help >/dev/null || fail "installed cairn --help failed"
# The SDK jobs get (CAIRN_PYTHON_SDK) imports with Debian's packages, and the
# .pth puts it on python3's path: a site dir of the root reads cairn.pth.
sdk="$(cd "$root/usr/lib/cairn/python" && pwd)"
sdk_got="$(/usr/bin/python3 -c "import site; site.addsitedir('$root/usr/lib/python3/dist-packages')
import cairn.job, cairn.v1.study_pb2, os; print(os.path.dirname(os.path.dirname(cairn.__file__)))")" \
  || fail "the installed SDK does not import"
[ "$sdk_got" = "$sdk" ] || fail "cairn.pth led to '$sdk_got', expected '$sdk'"
# cairn-train's CUDA backend is a module it dlopens from ../lib/cairn/: the
# installed binary must find it (a machine without a GPU then reports "no
# CUDA device", not a missing module).
if [ -e "$build/lib/cairn/libcairn_train_cuda.so" ]; then
  [ -e "$root/usr/lib/cairn/libcairn_train_cuda.so" ] \
    || fail "missing /usr/lib/cairn/libcairn_train_cuda.so"
  printf 'x,y\n0,0\n1,1\n0,0\n1,1\n' >"$tmp/t.csv"
  out="$("$root/usr/bin/cairn-train" --backend=cuda --train="$tmp/t.csv" \
    --epochs=0 --job-dir="$tmp/job" 2>&1 || true)"
  [[ "$out" != *"cannot load the CUDA backend module"* ]] \
    || fail "installed cairn-train cannot load its CUDA module: $out"
fi
echo "installed into $root: cairnd --version = $got; cairn user created; unit, dashboards and Python SDK in place"
