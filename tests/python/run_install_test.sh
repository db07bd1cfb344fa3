#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the package imported from there (no build
# tree on any path): it must load the installed libtg and find the installed plugins.
#   run_install_test.sh CMAKE BUILD_DIR PYTHON PYTHON_INSTALL_DIR
set -euo pipefail
cmake=$1 build=$2 python=$3 pydir=$4
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 || { cat "$prefix.log"; exit 1; }
rm -f "$prefix.log"
cd "$prefix"
env -u PYTHONPATH -u TG_PLUGIN_PATH PYTHONPATH="$prefix/$pydir" "$python" - "$prefix" <<'PY'
import sys
prefix = sys.argv[1]
import tinygrad_cpp as tg
assert tg.__file__.startswith(prefix), tg.__file__
out = (tg.Tensor([1., 2., 3.]) * 2).tolist()
assert out == [2.0, 4.0, 6.0], out
libs = [l.split()[-1] for l in open("/proc/self/maps") if "libtg.so" in l or "libtg-" in l]
assert libs and all(p.startswith(prefix) for p in libs), libs
print("devices:", ", ".join(tg.Device.devices()))
print("PASS: installed package", out)
PY
