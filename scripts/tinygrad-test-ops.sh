#!/usr/bin/env bash
# Runs tinygrad's own test/test_ops.py against tinygrad_cpp, PyTorch as the reference (as
# tinygrad runs it), through the compatibility shim python/tinygrad_shim (a `tinygrad` import
# path whose names all map onto tinygrad_cpp). Prints passed / failed / errors / skipped out
# of the total and the failures grouped by cause.
#   scripts/tinygrad-test-ops.sh TINYGRAD_SOURCE [pytest selection, e.g. -k "conv"]
# TINYGRAD_SOURCE: a tinygrad checkout or its unpacked source distribution (never committed).
# BUILD (default build/default) is the build tree whose python/ holds the package; the
# interpreter is the one it was built for (CMake's Python3_EXECUTABLE), which needs numpy,
# torch and pytest (Debian: python3-numpy python3-torch python3-pytest); PYTHON overrides it,
# e.g. a venv's python (same minor version as the build's) with a newer torch from PyPI:
#   PYTHON=/path/to/venv/bin/python scripts/tinygrad-test-ops.sh TINYGRAD_SOURCE
# TEST_TIMEOUT (s, 120) bounds each test; KEEP=1 keeps the working folder (pytest.log,
# results.jsonl).
set -euo pipefail
src=${1:?usage: scripts/tinygrad-test-ops.sh TINYGRAD_SOURCE [pytest args...]}
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$repo/build/default}
test_file=""
for f in "$src/test/test_ops.py" "$src/test/backend/test_ops.py"; do
  if [ -f "$f" ]; then test_file=$f; break; fi
done
if [ -z "$test_file" ]; then
  echo "tinygrad-test-ops: no test/test_ops.py or test/backend/test_ops.py under $src" >&2
  exit 2
fi
if [ ! -d "$build/python/tinygrad_cpp" ]; then
  echo "tinygrad-test-ops: $build/python/tinygrad_cpp is missing: build first (make build)" >&2
  exit 2
fi
python=${PYTHON:-$(sed -n 's/^Python3_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")}
python=${python:-/usr/bin/python3}
if ! "$python" -c "import torch, numpy, pytest" 2>/dev/null; then
  echo "tinygrad-test-ops: $python needs torch, numpy and pytest (apt-get install python3-torch python3-pytest, or PYTHON=a venv's python with them)" >&2
  exit 2
fi

work=$(mktemp -d)
# KEEP=1 keeps the folder (pytest.log, results.jsonl) and says where.
if [ "${KEEP:-0}" = 1 ]; then echo "tinygrad-test-ops: working in $work"; else trap 'rm -rf "$work"' EXIT; fi
# The test file alone (tinygrad's conftest and test package stay out), with a per-test timeout.
cp "$test_file" "$work/test_ops.py"
cp "$repo/scripts/tinygrad_test_ops_conftest.py" "$work/conftest.py"
echo "tinygrad-test-ops: $test_file ($(git -C "$src" rev-parse HEAD 2>/dev/null || echo "no git"))"
echo "tinygrad-test-ops: torch $("$python" -c 'import torch; print(torch.__version__)'), $python"
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$repo/python/tinygrad_shim:$build/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$python" "$repo/scripts/tinygrad_test_ops.py" "$work" "$@"
