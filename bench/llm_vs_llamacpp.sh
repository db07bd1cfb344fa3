#!/usr/bin/env bash
# `tinyrun llm bench` beside llama.cpp's `llama-bench` on a random-weight 110M llama (dim 768,
# 12 layers, 12 heads, ffn 2048, vocab 32000) in F32, Q8_0 and Q4_0: pp512 and tg128 tokens/s
# of both in one run on this machine, their ratio, and our decode as a fraction of the
# machine's read bandwidth (the bytes a decode step reads x tokens/s over tg_bench_read_bw; the
# bytes are tinyrun's "size" column: every weight but an untied token-embedding table, of which
# a step reads one row).
#
# usage: bench/llm_vs_llamacpp.sh [LLAMA_CPP_SOURCE_DIR]
#   The llama.cpp source comes from the folder given (or $LLAMA_CPP_DIR); without one, the
#   vendored copy inside PyPI's llama-cpp-python source package is downloaded with pip into
#   /tmp. It is built CPU-only under /tmp (never in this repository).
#   TINYRUN=..., READ_BW=... (tg_bench_read_bw), REPS=3, PP=512, TG=128, WORK=/tmp/tg_llm_bench
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build/${PRESET:-default}
tinyrun=${TINYRUN:-$build/apps/tinyrun/tinyrun}
read_bw=${READ_BW:-$build/bench/tg_bench_read_bw}
reps=${REPS:-3} pp=${PP:-512} tg=${TG:-128}
work=${WORK:-/tmp/tg_llm_bench}
mkdir -p "$work"
for exe in "$tinyrun" "$read_bw"; do
  [ -x "$exe" ] || { echo "llm_vs_llamacpp: $exe is not built (make build)" >&2; exit 1; }
done

src=${1:-${LLAMA_CPP_DIR:-}}
if [ -z "$src" ]; then
  src=$work/llama.cpp
  if [ ! -f "$src/CMakeLists.txt" ]; then
    echo "llm_vs_llamacpp: fetching llama.cpp's source (llama-cpp-python's sdist from PyPI) into $work" >&2
    rm -rf "$work/sdist" && mkdir -p "$work/sdist"
    python3 -m pip download --quiet --no-deps --no-binary :all: -d "$work/sdist" llama-cpp-python
    tar -xzf "$work"/sdist/llama_cpp_python-*.tar.gz -C "$work/sdist"
    mv "$work"/sdist/llama_cpp_python-*/vendor/llama.cpp "$src"
  fi
fi
llama_build=$work/llama.cpp-build
# llama.cpp's instruction sets: -march=native, except on CPUs that report AMX. There its AMX
# kernels (built whenever the compiler defines __AMX_INT8__) die with SIGILL at the first
# tileloadd on the Xeons here, so the same ISA is named without AMX (tinyrun uses no AMX either).
llama_isa_flags() {
  local f
  f=$(grep -m1 '^flags' /proc/cpuinfo || true)
  if ! grep -qw amx_int8 <<<"$f"; then
    echo "-DGGML_NATIVE=ON"
    return
  fi
  echo "llm_vs_llamacpp: this CPU reports AMX; building llama.cpp without it (see the comment)" >&2
  local out="-DGGML_NATIVE=OFF" flag opt
  for pair in avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx_vnni:AVX_VNNI avx512f:AVX512 \
    avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16; do
    flag=${pair%%:*} opt=${pair#*:}
    if grep -qw "$flag" <<<"$f"; then out+=" -DGGML_$opt=ON"; else out+=" -DGGML_$opt=OFF"; fi
  done
  echo "$out"
}
if [ ! -x "$llama_build/bin/llama-bench" ]; then
  echo "llm_vs_llamacpp: building llama-bench (CPU only) in $llama_build" >&2
  cmake -S "$src" -B "$llama_build" -G Ninja -DCMAKE_BUILD_TYPE=Release $(llama_isa_flags) \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF > "$work/llama-configure.log"
  cmake --build "$llama_build" --target llama-bench -j "$(nproc)" > "$work/llama-build.log"
fi
llama_bench=$llama_build/bin/llama-bench

model=$work/llama110m
if [ ! -f "$model.F32.gguf" ]; then
  "$tinyrun" llm random --dim 768 --layers 12 --heads 12 --ffn 2048 --vocab 32000 "$model.F32.gguf" 2>/dev/null
fi
for t in Q8_0 Q4_0; do
  [ -f "$model.$t.gguf" ] || "$tinyrun" llm quantize "$model.F32.gguf" "$model.$t.gguf" "$t" 2>/dev/null
done

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
flags=$(grep -m1 -o -w 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')
bw=$("$read_bw" 1024 | sed -n 's/read bandwidth: \([0-9.]*\) GB\/s.*/\1/p')
echo "machine: $(nproc) cores, ${cpu:-unknown CPU} ($flags), read bandwidth ${bw} GB/s"
echo
printf "| format | test | tinyrun t/s | llama.cpp t/s | ratio | tinyrun decode GB/s | of read bw |\n"
printf "| ------ | ---- | ----------: | ------------: | ----: | ------------------: | ---------: |\n"
for t in F32 Q8_0 Q4_0; do
  f=$model.$t.gguf
  ours=$("$tinyrun" llm bench -m "$f" -p "$pp" -n "$tg" -r "$reps" 2>/dev/null)
  theirs=$("$llama_bench" -m "$f" -p "$pp" -n "$tg" -r "$reps" -t "$(nproc)" -o csv 2>/dev/null)
  size=$(awk -F'|' 'NR > 2 { split($3, a, " "); printf "%.0f", a[1] * 1048576; exit }' <<<"$ours")
  for test in "pp$pp" "tg$tg"; do
    o=$(awk -F'|' -v t="$test" '$6 ~ " "t" " { split($7, a, " "); print a[1] }' <<<"$ours")
    n=${test#??}
    kind=$([ "${test:0:2}" = pp ] && echo n_prompt || echo n_gen)
    l=$(python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
kind, n = sys.argv[1], sys.argv[2]
other = "n_gen" if kind == "n_prompt" else "n_prompt"
print(next(r["avg_ts"] for r in rows if r[kind] == n and r[other] == "0"))' "$kind" "$n" <<<"$theirs")
    awk -v fmt="$t" -v test="$test" -v o="$o" -v l="$l" -v size="$size" -v bw="$bw" 'BEGIN {
      gbs = test ~ /^tg/ ? sprintf("%.1f", size * o / 1e9) : "-"
      frac = test ~ /^tg/ ? sprintf("%.0f%%", 100 * size * o / 1e9 / bw) : "-"
      printf "| %s | %s | %.2f | %.2f | %.2fx | %s | %s |\n", fmt, test, o, l, o / l, gbs, frac }'
  done
done
