#!/bin/bash
# Makes sure podman's local store holds localhost/cairn-sagemaker-trainer:1,
# the SageMaker tests' image: tests/containers/ensure_image.sh's base image
# plus image/train (podman build --pull=never, about 2 s). Exits 1 on any
# failure, as that script does (podman that cannot run fails the test).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/../containers/ensure_image.sh"
podman build -q --network=host --pull=never \
  -t localhost/cairn-sagemaker-trainer:1 \
  -f "$here/image/Containerfile" "$here/image" >/dev/null
