#!/usr/bin/env bash
# Creates (once) a Python virtual environment with the packages that only tests and benchmarks
# use, from PyPI: the `openai` client for the llm server test. Never a build dependency.
#   scripts/venv.sh DIR   -> DIR/bin/python with the packages; exit 3 when PyPI is unreachable
set -euo pipefail
dir=${1:?usage: scripts/venv.sh DIR}
packages=(openai)
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import openai" 2>/dev/null; then
  exit 0
fi
python3 -m venv "$dir"
if ! "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 30 "${packages[@]}"; then
  echo "venv: cannot install ${packages[*]} from PyPI (unreachable?)" >&2
  exit 3
fi
