# Shared by scripts/demo.sh and scripts/test.sh: installs the Debian packages
# Cairn needs (only the missing ones) and builds into build/.
# Usage: source scripts/common.sh; cairn_setup [extra packages...]

CAIRN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CAIRN_BUILD="${CAIRN_BUILD:-$CAIRN_ROOT/build}"

# Build and run-time dependencies of every component and test.
CAIRN_PACKAGES=(
  cmake g++ make pkg-config ccache git lld curl
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  librocksdb-dev libeigen3-dev prometheus-cpp-dev libabsl-dev
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev liblbfgspp-dev libspdlog-dev
  libgtest-dev libgmock-dev zlib1g-dev dpkg-dev adduser
  prometheus python3 python3-grpcio python3-grpc-tools python3-numpy
  python3-sklearn
  python3-pip python3-setuptools python3-venv python3-protobuf python3-yaml python3-pytest
  python3-optuna python3-onnx
  libcivetweb-dev libcpp-httplib-dev libssl-dev libjs-chart.js chromium chromium-driver python3-selenium
  python3-torch
  python3-googleapi python3-boto3 awscli
  slurmctld slurmd slurm-client munge
  podman runc buildah mmdebstrap uidmap catatonit
)

# What .ci/run adds for its clang builds (clang-strict, asan, tsan) and for
# building Abseil with ThreadSanitizer from Debian's source (scripts/tsan_absl.sh).
CAIRN_CI_PACKAGES=(clang libomp-dev libclang-rt-14-dev dpkg-dev universal-ctags)

cairn_log() { printf '\033[1m[cairn]\033[0m %s\n' "$*" >&2; }

cairn_install_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  cairn_log "installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

cairn_build_env() {
  # Clones in different directories share ccache entries: paths below the
  # root are hashed as relative, and so is the working directory, which
  # ccache otherwise hashes into every object with debug info (the asan and
  # tsan presets' -gline-tables-only), so that CI's clean clone missed the
  # cache for both sanitizer builds. Such an object's line tables then name
  # the clone that compiled it first.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$CAIRN_ROOT}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
}

# cairn_build_preset PRESET DIR [TARGET...]: configures DIR with a preset of
# CMakePresets.json and builds the targets (default: all).
cairn_build_preset() {
  local preset="$1" dir="$2"
  shift 2
  cairn_build_env
  local jobs targets=()
  jobs="$(nproc 2>/dev/null || echo 2)"
  [ $# -gt 0 ] && targets=(--target "$@")
  cairn_log "configuring preset $preset into $dir"
  mkdir -p "$dir"
  (cd "$CAIRN_ROOT" && cmake --preset "$preset" -B "$dir") >"$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; return 1; }
  cairn_log "building $preset with $jobs jobs"
  cmake --build "$dir" -j "$jobs" "${targets[@]}"
}

cairn_build() {
  cairn_build_preset default "$CAIRN_BUILD"
}

# cairn_ctest JUNIT [CTEST_ARG...]: ctest, its results also written to JUNIT
# (JUnit XML with every test's output, where scripts/ci_summary.py finds the
# reason of each skip; a long output keeps its start and end).
cairn_ctest() {
  local junit="$1"
  shift
  ctest --output-junit "$junit" --test-output-truncation middle "$@"
}

# Points git at the repository's hooks (scripts/hooks: commit-msg refuses
# subjects over 72 characters), unless the clone already uses other hooks.
cairn_install_hooks() {
  git -C "$CAIRN_ROOT" rev-parse --git-dir >/dev/null 2>&1 || return 0
  local current
  current="$(git -C "$CAIRN_ROOT" config --get core.hooksPath || true)"
  if [ -z "$current" ]; then
    git -C "$CAIRN_ROOT" config core.hooksPath scripts/hooks
    cairn_log "git hooks: core.hooksPath set to scripts/hooks"
  elif [ "$current" != scripts/hooks ]; then
    cairn_log "git hooks: core.hooksPath is $current; scripts/hooks not installed"
  fi
}

# cairn_setup_podman: container jobs (docs/containers.md) need rootful
# podman to run at all on this kind of host: runc instead of crun (crun
# refuses hybrid cgroups) and default ulimits within the host's hard limits
# (podman asks for more than a host without CAP_SYS_RESOURCE may give).
# Writes /etc/containers/containers.conf unless an admin wrote their own
# (no marker line); idempotent.
cairn_setup_podman() {
  cairn_install_packages podman runc buildah mmdebstrap uidmap catatonit
  [ "$(id -u)" -eq 0 ] || { cairn_log "podman: not root, containers.conf left alone"; return 0; }
  local conf=/etc/containers/containers.conf marker="# Written by Cairn's scripts/common.sh"
  if [ -e "$conf" ] && ! grep -qF "$marker" "$conf"; then
    cairn_log "podman: $conf is the admin's own, left alone"
    return 0
  fi
  local n p
  n="$(ulimit -Hn)"; [ "$n" = unlimited ] && n=1048576
  p="$(ulimit -Hu)"
  { [ "$p" = unlimited ] || [ "$p" -gt 32768 ]; } && p=32768  # podman caps NPROC there
  local want
  want="$(printf '%s\n[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' \
    "$marker" "$n" "$n" "$p" "$p")"
  if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
    mkdir -p /etc/containers
    printf '%s\n' "$want" >"$conf"
    cairn_log "podman: wrote $conf (runc, ulimits nofile=$n nproc=$p)"
  fi
}

cairn_setup() {
  cairn_install_hooks
  cairn_install_packages "${CAIRN_PACKAGES[@]}" "$@"
  cairn_setup_podman
  cairn_build
}

# cairn_setup_targets TARGET...: cairn_setup for part of the tree: the same
# packages and configuration, but only the TARGETs (and what they link) are
# built, no tests or benchmarks (scripts/demo.sh).
cairn_setup_targets() {
  cairn_install_hooks
  cairn_install_packages "${CAIRN_PACKAGES[@]}"
  cairn_build_preset default "$CAIRN_BUILD" "$@"
}

# cairn_require_bins BIN_DIR NAME...: exits 1 naming the first of the
# binaries that BIN_DIR lacks and the command that builds it.
cairn_require_bins() {
  local bin="$1" b
  shift
  for b in "$@"; do
    [ -x "$bin/$b" ] || {
      echo "$(basename "$0"): $bin/$b not built (cmake --build build --target $b)" >&2
      exit 1
    }
  done
}

# cairn_start_cairnd BIN_DIR DIR [FLAG...]: starts BIN_DIR/cairnd (with the
# extra FLAGs) on a free loopback
# port (metrics off, or on $CAIRN_METRICS_LISTEN if set) with its store in
# DIR/data and its log in DIR/cairnd.log;
# sets CAIRND_PID and exports CAIRN_SERVER and CAIRN_TOKEN_FILE (the admin
# token cairnd wrote to DIR/data/admin.token), so that cairn and the Python
# clients started after it authenticate. cairn_stop_cairnd stops it.
cairn_start_cairnd() {
  local bin="$1" dir="$2"
  shift 2
  mkdir -p "$dir"
  # mktemp -d makes DIR 0700; a root cairnd runs trial jobs as nobody, and
  # they must reach their job dirs in DIR/data/jobs (search, not list).
  chmod 711 "$dir"
  "$bin/cairnd" --data-dir "$dir/data" --listen 127.0.0.1:0 --metrics-listen "${CAIRN_METRICS_LISTEN:-}" --http-listen "" \
    --port-file "$dir/port" "$@" >"$dir/cairnd.log" 2>&1 &
  CAIRND_PID=$!
  for _ in $(seq 1 300); do
    [ -s "$dir/port" ] && break
    kill -0 "$CAIRND_PID" 2>/dev/null || { cat "$dir/cairnd.log" >&2; return 1; }
    sleep 0.1
  done
  [ -s "$dir/port" ] || { echo "cairnd did not start" >&2; cat "$dir/cairnd.log" >&2; return 1; }
  CAIRN_SERVER="127.0.0.1:$(tr -d '\n' <"$dir/port")"
  CAIRN_TOKEN_FILE="$dir/data/admin.token"
  export CAIRN_SERVER CAIRN_TOKEN_FILE
}

cairn_stop_cairnd() {
  if [ -n "${CAIRND_PID:-}" ] && kill -0 "$CAIRND_PID" 2>/dev/null; then
    kill -TERM "$CAIRND_PID"
    wait "$CAIRND_PID" 2>/dev/null || true
  fi
  CAIRND_PID=""
}

# cairn_start_cairnd_no_gp_deadline BIN_DIR DIR: cairn_start_cairnd with
# --gp-suggest-deadline 0 when that cairnd has the flag, so that GP
# suggestions always wait for the model and bench results do not depend on
# the machine's load. The help text is read whole first: with pipefail,
# `cairnd --help | grep -q` fails whenever grep exits before cairnd has
# written the rest (SIGPIPE).
cairn_start_cairnd_no_gp_deadline() {
  local bin="$1" dir="$2" help flags=()
  help="$("$bin/cairnd" --help 2>/dev/null || true)"
  if [[ "$help" == *--gp-suggest-deadline* ]]; then
    flags=(--gp-suggest-deadline 0)
  fi
  cairn_start_cairnd "$bin" "$dir" "${flags[@]}"
}
