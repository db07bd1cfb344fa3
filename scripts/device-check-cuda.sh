#!/usr/bin/env bash
# The cuda plugin on a real NVIDIA GPU, in one run (under 8 minutes on an H200 with 16 cores):
#   1. configure and build (-j16) the plugins, tinyrun, the suites run below and the bench
#   2. the probe: `tinyrun plugins` and a DEBUG=4/DEBUG=7 launch (CUDA C, then SASS)
#   3. the tensor, nn and JIT suites with DEV=CUDA (and the CUDA compile tests); tensor.matmul's
#      float16/bfloat16 tensor-core shapes run on mma.sync there (the TC opt's first GPU check)
#   4. `tinyrun mnist train --steps 20` on CUDA, and the same on the CPU for the speed ratio
#   5. the tensor-core matmul test alone (DEBUG=4: the TC opts), the matmul benchmark (float32,
#      float16, bfloat16 at 4096) beside cuBLAS, and again with TC=0 (no tensor cores)
# Every step prints its wall time; the script goes on after a failing step and exits non-zero
# at the end if any failed. Usage: scripts/device-check-cuda.sh [build-dir] (default build/cuda).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build/cuda}
JOBS=${JOBS:-16}
failed=()
step() { # step NAME TIMEOUT_SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "=== ${name}"
  if timeout "${limit}" "$@"; then
    echo "=== ${name}: ok ($((SECONDS - t0)) s)"
  else
    echo "=== ${name}: FAILED (rc $?, $((SECONDS - t0)) s)"
    failed+=("${name}")
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || echo "nvidia-smi: not found"

generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
step configure 120 cmake -S . -B "${BUILD}" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -Wno-dev
step build 300 cmake --build "${BUILD}" -j "${JOBS}" --target tinyrun tg-cpu tg-cuda tg-null \
  tg_tests_tensor tg_tests_nn tg_tests_engine tg_tests_cuda tg_bench_cuda
TINYRUN=${BUILD}/apps/tinyrun/tinyrun

step probe 30 bash -c "'${TINYRUN}' plugins | grep -i -A3 cuda"
step debug4_source 60 bash -c "DEV=CUDA DEBUG=4 '${TINYRUN}' demo | grep -m1 -A3 'extern \"C\" __global__'"
step debug7_sass 60 bash -c "DEV=CUDA DEBUG=7 '${TINYRUN}' demo | grep -m3 -E 'SASS|\\.text\\.|LDG|STG'"
step ptx_renderer 60 env DEV=CUDA:PTX "${TINYRUN}" demo

export DEV=CUDA
step tensor_suites 240 bash -c "cd '${BUILD}' && ctest -L tensor -LE cl -j 8 --output-on-failure --timeout 200"
step nn_suites 120 bash -c "cd '${BUILD}' && ctest -L nn -LE cl -j 8 --output-on-failure --timeout 100"
step jit_suite 60 bash -c "cd '${BUILD}' && ctest -L jit -LE cl -j 4 --output-on-failure --timeout 50"
unset DEV
step cuda_compile_tests 120 bash -c "cd '${BUILD}' && ctest -L cuda -j 8 --output-on-failure"

step mnist_cuda 180 env DEV=CUDA "${TINYRUN}" mnist train --steps 20
step mnist_cpu 180 env DEV=CPU "${TINYRUN}" mnist train --steps 20
step tc_matmul 60 env DEV=CUDA DEBUG=4 "${BUILD}/tests/tg_tests_tensor" "--test-case=tensor-core shapes*"
step matmul_bench 180 "${BUILD}/bench/tg_bench_cuda" 4096
step matmul_bench_no_tc 180 env TC=0 "${BUILD}/bench/tg_bench_cuda" 4096

if ((${#failed[@]})); then
  echo "device-check-cuda: FAILED steps: ${failed[*]}"
  exit 1
fi
echo "device-check-cuda: all steps passed"
