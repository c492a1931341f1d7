#!/usr/bin/env bash
# Benchmark of cairn-train's CPU backend against PyTorch's CPU on the same MLP
# (784-256-256-10, batch 128, Adam, float32, same thread count), in one run,
# plus the training step's GFLOP/s against a plain Eigen GEMM of the same
# shapes, and the startup of cairn-train --backend=cpu against the cairn CLI
# (startup_bench.py). Usage: bench/train/run.sh [BUILD_DIR] [THREADS] [SECONDS]
# Targets (issue 5): ratio >= 5, fraction_of_gemm >= 0.30.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
THREADS=${2:-2}
SECONDS_EACH=${3:-3}
LAYERS=784,256,256,10
BATCH=128
if [[ ! -x $BUILD/bin/train_bench ]]; then
  cmake --build "$BUILD" -j2 --target train_bench >/dev/null
fi
ours=$("$BUILD/bin/train_bench" --threads="$THREADS" --batch=$BATCH \
  --layers=$LAYERS --seconds="$SECONDS_EACH")
echo "$ours"
# Debian's python3-torch lives in /usr/bin/python3.
torch=$(/usr/bin/python3 "$ROOT/bench/train/torch_mlp.py" "$THREADS" $BATCH $LAYERS "$SECONDS_EACH")
echo "$torch"
/usr/bin/python3 - "$ours" "$torch" <<'PY'
import json, sys
ours, torch = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ratio = ours["samples_per_s"] / torch["samples_per_s"]
print(json.dumps({"bench": "summary", "cairn_samples_per_s": ours["samples_per_s"],
                  "torch_samples_per_s": torch["samples_per_s"],
                  "ratio_vs_torch": round(ratio, 2), "target_ratio": 5,
                  "step_gflops": ours["step_gflops"],
                  "eigen_gemm_gflops": ours["eigen_gemm_gflops"],
                  "fraction_of_gemm": ours["fraction_of_gemm"],
                  "target_fraction": 0.30}))
PY
# With a GPU present: the CUDA backend's training-step TFLOP/s (compare with
# the device's float32 peak; cuBLAS runs in pedantic FP32 mode, no TF32).
for b in 128 4096; do
  if ! "$BUILD/bin/train_bench" --backend=cuda --batch=$b --layers=$LAYERS \
      --seconds="$SECONDS_EACH" 2>/dev/null; then
    echo '{"bench": "cairn_train_cuda", "skipped": "no CUDA device present"}'
    break
  fi
done
# Startup of a trivial --backend=cpu run against the cairn CLI (target: within
# 3x; CUDA is loaded only for --backend=cuda).
if [[ -x $BUILD/bin/cairn && -x $BUILD/bin/cairn-train ]]; then
  /usr/bin/python3 "$ROOT/bench/train/startup_bench.py" "$BUILD" 20
fi
