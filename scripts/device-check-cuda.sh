#!/usr/bin/env bash
# The cuda plugin on a real NVIDIA GPU, in one run (4 minutes on an H200 with 16 cores, from a
# bundle):
#   1. the build: where .devbundle/bundle.tar.xz is present (scripts/device-bundle.sh, made on a
#      machine with this project's Debian build dependencies, which GPU images lack), it is
#      unpacked at the absolute path it was built at and its libraries registered with the
#      loader; otherwise configure and build (-j16) the plugins, tinyrun, the suites and the bench
#   2. the probe: `tinyrun plugins`, `tinyrun demo` on CUDA (checked against the host), a
#      DEBUG=4/DEBUG=7 launch (CUDA C, then SASS) and the demo through the PTX renderer
#   3. CUDA's speed: `tinyrun mnist train --steps 20` and `mnist bench` (beside PyTorch on the
#      GPU), the matmul benchmark (float32, float16, bfloat16 at 4096) beside cuBLAS, by default
#      and with BEAM=2 (the Opts it found), mnist and the matmul again with 64-bit index math
#      (CUDA_INDEX64=1), `tinyrun llm bench` on a random 110M llama (F32, Q8_0)
#   4. the tensor, nn, JIT and LLM suites with DEV=CUDA; tensor.matmul's float16/bfloat16
#      tensor-core shapes run on mma.sync there. Three tensor tests also use DEV=CPU:C, which
#      needs clang-19: on a GPU image without it they fail saying so.
#   5. the CPU figures for the speed-ups (mnist, the LLM), the matmul with TC=0 (no tensor
#      cores), the tensor-core test alone at DEBUG=4 (its opts), the CUDA compile tests
# Every step prints its wall time; the script goes on after a failing step and exits non-zero
# at the end if any failed. With OUT set (the device tool's output folder) the whole log is
# also written to $OUT/device-check.log.
# Usage: scripts/device-check-cuda.sh [build-dir] (default build/cuda; a bundle sets its own).
set -u
cd "$(dirname "$0")/.."
if [[ -n "${OUT:-}" && -z "${TG_DEVICE_CHECK_LOGGING:-}" ]]; then
  export TG_DEVICE_CHECK_LOGGING=1
  set -o pipefail
  "$0" "$@" 2>&1 | tee "${OUT}/device-check.log"
  exit $?
fi
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

# unpack_bundle: the build at its own absolute path (a link to this checkout stands in for the
# source folder it was configured from), its libraries where the loader finds them, but only
# those the machine lacks (its own C++ runtime, zlib and so on stay in charge).
unpack_bundle() {
  local tmp=/tmp/tg-bundle
  rm -rf "${tmp}" && mkdir -p "${tmp}"
  xz -T0 -dc .devbundle/bundle.tar.xz | tar -C "${tmp}" -xf - || return 1
  local src build
  src=$(cat "${tmp}/source_path")
  build=$(cat "${tmp}/build_path")
  if [[ "$(realpath -m "${src}")" != "$(pwd -P)" ]]; then
    [[ -e "${src}" ]] && { echo "bundle: ${src} exists here and is not this checkout"; return 1; }
    mkdir -p "$(dirname "${src}")" && ln -s "$(pwd -P)" "${src}"
  fi
  mkdir -p "${build}" && cp -a "${tmp}/build/." "${build}/"
  local libdir=/usr/local/lib/tg-bundle have
  mkdir -p "${libdir}"
  have=$(ldconfig -p | awk '{print $1}')
  for lib in "${tmp}"/lib/*; do
    grep -qx "$(basename "${lib}")" <<< "${have}" || cp "${lib}" "${libdir}/"
  done
  echo "${libdir}" > /etc/ld.so.conf.d/tg-bundle.conf && ldconfig
  echo "bundle: ${build} (from ${src}); libraries added: $(ls "${libdir}" | tr '\n' ' ')"
  BUILD=${build}
  # The data beside the source folder, as the suites look for it (../shared/data).
  if [[ -d "${tmp}/data" && ! -e "$(dirname "${src}")/shared/data" ]]; then
    mkdir -p "$(dirname "${src}")/shared" && ln -s "${tmp}/data" "$(dirname "${src}")/shared/data"
  fi
  export TG_DATA_DIR=${TG_DATA_DIR:-${tmp}/data}
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || echo "nvidia-smi: not found"

ldd --version | head -1
command -v nvcc && nvcc --version | tail -2
if [[ -f .devbundle/bundle.tar.xz ]]; then
  echo "=== unpack_bundle"
  unpack_bundle || { echo "=== unpack_bundle: FAILED"; failed+=(unpack_bundle); }
else
  generator=()
  command -v ninja > /dev/null && generator=(-G Ninja)
  step configure 120 cmake -S . -B "${BUILD}" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -Wno-dev
  step build 300 cmake --build "${BUILD}" -j "${JOBS}" --target tinyrun tg-cpu tg-cuda tg-null \
    tg_tests_tensor tg_tests_nn tg_tests_engine tg_tests_llm tg_tests_cuda tg_bench_cuda
fi
# The toolkit (NVRTC, ptxas) beside the nvcc on the path, and cuBLAS for the bench where only a
# Python package ships it.
if [[ -z "${CUDA_PATH:-}" ]] && command -v nvcc > /dev/null; then
  export CUDA_PATH=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
fi
echo "CUDA_PATH=${CUDA_PATH:-unset}"
if ! ldconfig -p | grep -q libcublas.so; then
  cublas=$(find "${CUDA_PATH:-/usr/local/cuda}" /usr/local /opt -name 'libcublas.so.1[23]' 2>/dev/null | head -1)
  [[ -n "${cublas}" ]] && export LD_LIBRARY_PATH=$(dirname "${cublas}")${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}
  echo "cuBLAS: ${cublas:-not found}"
fi
TINYRUN=${BUILD}/apps/tinyrun/tinyrun

# In order of what a short lease most needs: the probe, CUDA's speed (mnist, the matmul beside
# cuBLAS, the LLM), then the suites, then the CPU figures the speed-ups are measured against.
step probe 30 bash -c "'${TINYRUN}' plugins | grep -i -A3 cuda"
step demo_cuda 60 env DEV=CUDA "${TINYRUN}" demo
step debug4_source 30 bash -c "DEV=CUDA DEBUG=4 '${TINYRUN}' demo | grep -m1 -A3 'extern \"C\" __global__'"
step debug7_sass 30 bash -c "DEV=CUDA DEBUG=7 '${TINYRUN}' demo | grep -m3 -E 'SASS|\\.text\\.|LDG|STG'"
step ptx_renderer 30 env DEV=CUDA:PTX "${TINYRUN}" demo
# Copies: host memory read and written in place, CUDA to CUDA on the GPU (DEBUG=2 names each
# copy's route).
step copy_routes 30 env DEBUG=2 "${BUILD}/tests/tg_tests_cuda" --test-suite=cuda.copy

step mnist_cuda 90 env DEV=CUDA "${TINYRUN}" mnist train --steps 20
step mnist_bench_cuda 90 env DEV=CUDA "${TINYRUN}" mnist bench --steps 20
step mnist_bench_cuda_index64 60 env DEV=CUDA CUDA_INDEX64=1 "${TINYRUN}" mnist bench --steps 20
step mnist_bench_torch_cuda 90 python3 bench/mnist_torch.py --steps 20 --device cuda
step matmul_bench 90 "${BUILD}/bench/tg_bench_cuda" 4096
step matmul_bench_index64 60 env CUDA_INDEX64=1 "${BUILD}/bench/tg_bench_cuda" 4096
# BEAM's progress lines (DEBUG=1) name the Opts it found.
step matmul_bench_beam 150 bash -c "BEAM=2 DEBUG=1 '${BUILD}/bench/tg_bench_cuda' 4096 2>&1 | grep -E 'done|TFLOP|matmul'"
# The LLM decode: a random 110M llama (dim 768, 12 layers) in F32 and Q8_0, on CUDA and the CPU.
llm=/tmp/tg-llm110m
step llm_model 60 bash -c "'${TINYRUN}' llm random --dim 768 --layers 12 --heads 12 --ffn 2048 --vocab 32000 ${llm}.F32.gguf > /dev/null && '${TINYRUN}' llm quantize ${llm}.F32.gguf ${llm}.Q8_0.gguf Q8_0 > /dev/null"
step llm_bench_cuda 60 env DEV=CUDA "${TINYRUN}" llm bench -m "${llm}.F32.gguf" -p 512 -n 128 -r 2
step llm_bench_cuda_index64 60 env DEV=CUDA CUDA_INDEX64=1 "${TINYRUN}" llm bench -m "${llm}.F32.gguf" -p 512 -n 128 -r 2
# tinygrad's matvec knobs: a warp per row instead of 8 work items on 4 rows each.
step llm_bench_cuda_mv32 60 env DEV=CUDA MV_THREADS_PER_ROW=32 MV_ROWS_PER_THREAD=1 "${TINYRUN}" llm bench -m "${llm}.F32.gguf" -p 512 -n 128 -r 2
step llm_bench_cuda_q8 60 env DEV=CUDA "${TINYRUN}" llm bench -m "${llm}.Q8_0.gguf" -p 512 -n 128 -r 2

# The suites on CUDA (the CPU-only clang runs excluded: no clang-19 on a GPU image).
export DEV=CUDA
step tensor_suites 150 bash -c "cd '${BUILD}' && ctest -L tensor -LE cl -E clang -j 12 --output-on-failure --timeout 140"
step nn_suites 60 bash -c "cd '${BUILD}' && ctest -L nn -LE cl -j 8 --output-on-failure --timeout 55"
step jit_suite 45 bash -c "cd '${BUILD}' && ctest -L jit -LE cl -j 4 --output-on-failure --timeout 40"
step llm_suites 60 bash -c "cd '${BUILD}' && ctest -L llm -LE cl -E server -j 8 --output-on-failure --timeout 55"
unset DEV

step mnist_cpu 60 env DEV=CPU "${TINYRUN}" mnist train --steps 20
step mnist_bench_cpu 60 env DEV=CPU "${TINYRUN}" mnist bench --steps 10
step llm_bench_cpu 60 env DEV=CPU "${TINYRUN}" llm bench -m "${llm}.F32.gguf" -p 128 -n 32 -r 1
step matmul_bench_no_tc 60 env TC=0 "${BUILD}/bench/tg_bench_cuda" 4096
step tc_matmul 30 bash -c "DEV=CUDA DEBUG=4 '${BUILD}/tests/tg_tests_tensor' '--test-case=tensor-core shapes*' | grep -E 'opts:|test cases|Status'"
# The compile-only tests (they also run in `make test` on any machine with the toolkit).
# (cuda.codegen_corpus first runs the codegen suites through clang-19, which GPU images lack.)
step cuda_compile_tests 60 bash -c "cd '${BUILD}' && ctest -L cuda -E codegen_corpus -j 12 --output-on-failure"

if ((${#failed[@]})); then
  echo "device-check-cuda: FAILED steps: ${failed[*]}"
  exit 1
fi
echo "device-check-cuda: all steps passed"
