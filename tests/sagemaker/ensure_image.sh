#!/bin/bash
# Makes sure podman's local store holds the SageMaker tests' image:
# tests/containers/ensure_image.sh's base image plus image/train (podman
# build --pull=never, about 2 s), tagged localhost/cairn-sagemaker-trainer:1
# and :<the first 12 hex of sha256(Containerfile, train)>, the tag the
# tests run (boto3_fixture.IMAGE), so that worktrees with another train
# never run each other's. Exits 1 on any failure, as that script does
# (podman that cannot run fails the test).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/../containers/ensure_image.sh"
digest="$(cat "$here/image/Containerfile" "$here/image/train" | sha256sum | cut -c1-12)"
podman build -q --network=host --pull=never \
  -t localhost/cairn-sagemaker-trainer:1 \
  -t "localhost/cairn-sagemaker-trainer:$digest" \
  -f "$here/image/Containerfile" "$here/image" >/dev/null
