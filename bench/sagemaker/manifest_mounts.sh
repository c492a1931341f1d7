#!/bin/bash
# What a ManifestFile channel's one read-only bind mount per listed object
# costs at container start: `podman run ... true` with N file mounts at
# /opt/ml/input/data/train/<key> (as cairnd makes them) beside the same run
# with 1, interleaved for ROUNDS rounds; prints the median seconds of each.
# Usage: bench/sagemaker/manifest_mounts.sh [N=1000] [ROUNDS=5]
# Needs podman and the SageMaker tests' image (tests/sagemaker/ensure_image.sh).
set -euo pipefail
n="${1:-1000}" rounds="${2:-5}"
image=localhost/cairn-sagemaker-trainer:1
"$(dirname "$0")/../../tests/sagemaker/ensure_image.sh"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
run() {  # run COUNT: seconds of one container start with COUNT mounts
  local args=() i start
  for ((i = 1; i <= $1; i++)); do
    args+=(--mount "type=bind,source=$dir/f$i,destination=/opt/ml/input/data/train/f$i,ro=true")
  done
  start="$(date +%s.%N)"
  podman run --rm --network=none "${args[@]}" "$image" true
  awk -v end="$(date +%s.%N)" -v start="$start" 'BEGIN {print end - start}'
}
for ((i = 1; i <= n; i++)); do echo "$i" >"$dir/f$i"; done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
one=() many=()
for ((r = 0; r < rounds; r++)); do
  one+=("$(run 1)")
  many+=("$(run "$n")")
done
printf '1 mount: %.2f s\n' "$(printf '%s\n' "${one[@]}" | median)"
printf '%d mounts: %.2f s\n' "$n" "$(printf '%s\n' "${many[@]}" | median)"
