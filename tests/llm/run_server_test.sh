#!/usr/bin/env bash
# Starts `tinyrun llm serve` on a free loopback port with MODEL, runs server_test.py with the
# `openai` client from a virtual environment (scripts/venv.sh), stops the server.
#   run_server_test.sh TINYRUN MODEL VENV_DIR
# Prints "SKIP: ..." (the test is skipped) when the model or PyPI is missing.
set -uo pipefail
tinyrun=$1 model=$2 venv=$3
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -e "$model" ]; then
  echo "SKIP: $model not found (see ../shared/data/README.md)"
  exit 0
fi
if ! bash "$here/../../scripts/venv.sh" "$venv"; then
  echo "SKIP: the openai package could not be installed from PyPI"
  exit 0
fi
log=$(mktemp)
"$tinyrun" llm serve -m "$model" --host 127.0.0.1 --port 0 > "$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
port=""
for _ in $(seq 1 600); do
  port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | sed 's/.*://')
  [ -n "$port" ] && break
  kill -0 $pid 2>/dev/null || { cat "$log"; echo "FAIL: the server exited"; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log"; echo "FAIL: the server did not start listening"; exit 1; }
timeout 600 "$venv/bin/python" "$here/server_test.py" 127.0.0.1 "$port"
rc=$?
kill -0 $pid 2>/dev/null || { echo "FAIL: the server died during the test"; cat "$log"; exit 1; }
exit $rc
