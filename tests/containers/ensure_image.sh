#!/bin/bash
# Makes sure podman's local store holds the images the container tests use:
#  - localhost/cairn-base:bookworm: Debian bookworm minbase with python3,
#    built from the Debian mirror with mmdebstrap (no registry) and cached
#    as an OCI archive in ${CAIRN_CACHE:-~/.cache/cairn}, so that a machine
#    builds it once (about 2 minutes) and loads it afterwards (about 10 s);
#  - localhost/cairn-test-trainer:1: the base plus tests/containers/trainer.py
#    as its ENTRYPOINT (podman build --pull=never, about 2 s).
# The mirror is this machine's own (apt_mirrors.sh: a deb822 .sources file or
# the one-line sources.list). Exits 1, saying why, on any failure (podman
# that cannot run a container is a set-up failure, not a reason to skip),
# 0 once both images are there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${CAIRN_CACHE:-$HOME/.cache/cairn}"
base=localhost/cairn-base:bookworm
trainer=localhost/cairn-test-trainer:1
archive="$cache/cairn-base-bookworm.oci.tar"

if ! command -v podman >/dev/null || ! podman info >/dev/null 2>&1; then
  echo "ensure_image.sh: podman cannot run here (install and configure it: source scripts/common.sh; cairn_setup_podman)" >&2
  exit 1
fi
mkdir -p "$cache"
# One builder at a time: tests may run in parallel.
exec 9>"$cache/ensure_image.lock"
flock 9

if ! podman image exists "$base"; then
  if [ ! -s "$archive" ]; then
    command -v mmdebstrap >/dev/null || { echo "mmdebstrap missing (cairn_setup_podman installs it)" >&2; exit 1; }
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    "$here/apt_mirrors.sh" bookworm >"$work/bookworm.list"
    echo "building $base from the Debian mirror (once per machine):" \
      "$(tr '\n' ';' <"$work/bookworm.list")" >&2
    mmdebstrap --quiet --variant=minbase --include=python3 bookworm \
      "$work/rootfs.tar" "$work/bookworm.list"
    podman import -q --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' \
      "$work/rootfs.tar" "$base" >/dev/null
    podman save -q --format oci-archive -o "$work/base.oci.tar" "$base"
    mv "$work/base.oci.tar" "$archive"
  else
    podman load -q -i "$archive" >/dev/null
  fi
fi
if ! podman run --rm --pull=never --network=host "$base" true; then
  echo "ensure_image.sh: podman cannot run a container here (see above)" >&2
  exit 1
fi
# Rebuilt when the trainer changes (the build cache makes it instant).
podman build -q --network=host --pull=never -t "$trainer" \
  -f "$here/Containerfile" "$here" >/dev/null
