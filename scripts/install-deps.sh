#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the build needs and is missing.
# Idempotent and fast when everything is present: it only asks dpkg, and runs
# `apt-get update` once, only when something must be installed.
# --bench adds what only the benchmarks need (PyTorch, for bench/mnist_vs_torch.sh); the build
# and the tests never need it.
set -euo pipefail

bench=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    *) echo "install-deps: unknown option $arg (known: --bench)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config
  libboost1.81-dev libboost-json1.81-dev # Boost.DLL (header-only) and Boost.JSON
  llvm-19-dev clang-19                   # ORC JIT for the CPU plugin, clang for the C renderer
  libclang-rt-19-dev                     # libFuzzer and the sanitizers' runtimes for tests/fuzz
  libtbb-dev doctest-dev zlib1g-dev
  libopenblas-dev                        # the sgemm anchor of bench/tg_bench_tensor only
  clang-format
  python3-venv                           # venvs for PyPI-only test tools (scripts/venv.sh) and scripts/fetch-minilm.sh
  opencl-c-headers                       # plugins/qcom: the OpenCL API's declarations (never linked)
  ocl-icd-libopencl1 pocl-opencl-icd     # plugins/qcom at run time: the ICD loader and POCL's CPU device
  clinfo                                 # lists the OpenCL platforms and devices the loader sees
  pybind11-dev python3-dev python3-numpy # the Python package tinygrad_cpp (python/)
  python3-pytest                         # its test suite (ctest -L python)
)
if [ "$bench" = 1 ]; then
  packages+=(python3-torch)                # bench/mnist_torch.py: PyTorch's training step; the
                                           # reference of scripts/tinygrad-test-ops.sh
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: these Debian packages are missing: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
