#!/usr/bin/env bash
# The beautiful_mnist training step (batch 512, Adam) in tinygrad-cpp and in PyTorch, in one
# run on this machine: both figures and the ratio.
# usage: bench/mnist_vs_torch.sh [STEPS] [BATCH]   (TINYRUN=path/to/tinyrun, PYTHON=interpreter)
set -euo pipefail
steps=${1:-10}
batch=${2:-512}
here=$(cd "$(dirname "$0")" && pwd)
tinyrun=${TINYRUN:-$here/../build/${PRESET:-default}/apps/tinyrun/tinyrun}
if [ ! -x "$tinyrun" ]; then
  echo "mnist_vs_torch: $tinyrun is not built (run \`make build\` or set TINYRUN)" >&2
  exit 1
fi
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
echo "machine: $(nproc) cores, ${cpu:-unknown CPU}"

ours=$("$tinyrun" mnist bench --steps "$steps" --batch "$batch")
echo "$ours"
# Debian's python3-torch is installed for Debian's interpreter; a python3 earlier on PATH (pyenv,
# a venv) may not see it. PYTHON=... picks another one.
python=${PYTHON:-/usr/bin/python3}
torch=$("$python" "$here/mnist_torch.py" --steps "$steps" --batch "$batch")
echo "$torch"

ms() { sed -n 's/^ms\/step: //p' <<<"$1"; }
ours_ms=$(ms "$ours")
torch_ms=$(ms "$torch")
awk -v a="$ours_ms" -v b="$torch_ms" 'BEGIN {
  printf "ratio: tinygrad-cpp %.1f ms/step / PyTorch %.1f ms/step = %.2fx\n", a, b, a / b }'
