#!/bin/bash
# podman-user.sh USER [IMAGE...]: makes USER able to run rootless podman on
# this node and puts IMAGEs (from root's store) into USER's own store, so
# that Slurm jobs running as USER can run their container images
# (docs/slurm.md#container-images). Run as root on every node; idempotent.
#  - USER is created (home dir, no login shell) when absent;
#  - subuid/subgid ranges (65536 ids, after the highest range in use) when
#    USER has none: rootless podman maps the container's ids into them;
#  - ~USER/.config/containers/storage.conf with driver "overlay": the
#    default, vfs, copies the whole image on every run (seconds);
#  - each IMAGE is copied with `podman save | podman load` when USER's store
#    lacks it or holds another build of it (image ids differ).
# Needs podman configured for this host (scripts/common.sh:
# cairn_setup_podman). Exits 1 naming what failed.
set -euo pipefail
[ "$#" -ge 1 ] || { echo "usage: $0 USER [IMAGE...]" >&2; exit 2; }
user="$1"; shift
[ "$(id -u)" -eq 0 ] || { echo "podman-user.sh: must run as root" >&2; exit 1; }
case "$user" in
  root|'' ) echo "podman-user.sh: USER must be a non-root user" >&2; exit 1 ;;
  *[!a-z0-9_-]* ) echo "podman-user.sh: bad user name '$user'" >&2; exit 1 ;;
esac

if ! getent passwd "$user" >/dev/null; then
  useradd --create-home --shell /usr/sbin/nologin "$user"
fi
home="$(getent passwd "$user" | cut -d: -f6)"
[ -d "$home" ] || { echo "podman-user.sh: $user's home $home does not exist" >&2; exit 1; }

# Next free id after every range in /etc/subuid and /etc/subgid.
next_range() {
  awk -F: 'BEGIN { m = 100000 } NF == 3 && $2 + $3 > m { m = $2 + $3 } END { print m }' \
    /etc/subuid /etc/subgid 2>/dev/null || echo 100000
}
touch /etc/subuid /etc/subgid
if ! grep -q "^$user:" /etc/subuid || ! grep -q "^$user:" /etc/subgid; then
  start="$(next_range)"
  grep -q "^$user:" /etc/subuid || usermod --add-subuids "$start-$((start + 65535))" "$user"
  grep -q "^$user:" /etc/subgid || usermod --add-subgids "$start-$((start + 65535))" "$user"
fi

as_user() {
  (cd / && runuser -u "$user" -- env -i HOME="$home" USER="$user" \
    PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "$@")
}

conf="$home/.config/containers/storage.conf"
want="$(printf '[storage]\ndriver = "overlay"')"
if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
  as_user mkdir -p "$home/.config/containers"
  as_user sh -c "printf '%s\n' '[storage]' 'driver = \"overlay\"' >'$conf'"
  as_user podman system reset -f >/dev/null 2>&1 || true
fi
as_user podman info >/dev/null || { echo "podman-user.sh: rootless podman does not run as $user" >&2; exit 1; }

for image in "$@"; do
  id="$(podman image inspect --format '{{.Id}}' "$image")" ||
    { echo "podman-user.sh: no image $image in root's store" >&2; exit 1; }
  have="$(as_user podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
  [ "$have" = "$id" ] && continue
  podman save -q --format docker-archive "$image" | as_user podman load -q >/dev/null
  have="$(as_user podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
  [ "$have" = "$id" ] ||
    { echo "podman-user.sh: loading $image into $user's store failed" >&2; exit 1; }
done
