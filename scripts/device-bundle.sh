#!/usr/bin/env bash
# Packs a build made on this machine for a GPU machine whose image lacks this project's Debian
# build dependencies (Boost, LLVM 19, oneTBB, doctest), so the GPU checks need no build there:
# BUILD's executables, plugins, libraries and ctest files, stripped, and the shared libraries
# they load beyond the C and C++ runtimes, into one OUT/bundle.tar.xz (the device tool carries
# at most 64 MiB). scripts/device-check-cuda.sh unpacks it at the same absolute path as here,
# since ctest's files and the tests' compiled-in source folder name absolute paths.
# Usage: scripts/device-bundle.sh [build-dir (build/default)] [out-dir (.devbundle)]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build/default}")
OUT=$(realpath -m "${2:-.devbundle}")
stage=$(mktemp -d)
trap 'rm -rf "${stage}"' EXIT

# The build folder without objects, archives and CMake's own files: what ctest and the
# programs read at run time (executables, plugins, fake drivers, ctest files, generated data).
mkdir -p "${stage}/build"
tar -C "${BUILD}" --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' --exclude='.ninja_*' \
  --exclude='*.ninja' --exclude=CMakeCache.txt --exclude='*.log' --exclude=./.cache \
  --exclude=runs -cf - . | tar -C "${stage}/build" -xf -
# Debug info is most of the size; the GPU checks need none.
find "${stage}/build" -type f -exec sh -c 'file -b "$1" | grep -q "^ELF" && strip --strip-debug "$1"' _ {} \;

# Libraries the ELF files load that the C and C++ runtimes do not cover, by soname.
mkdir -p "${stage}/lib"
find "${stage}/build" -type f -exec sh -c 'file -b "$1" | grep -q "^ELF" && ldd "$1"' _ {} \; 2>/dev/null |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r soname path; do
    case "${soname}" in
    libc.so* | libm.so* | libstdc++.so* | libgcc_s.so* | ld-linux* | libpthread.so* | libdl.so* | \
      librt.so* | libtg*) ;;
    *) cp -L "${path}" "${stage}/lib/${soname}" && strip --strip-debug "${stage}/lib/${soname}" ;;
    esac
  done
echo "${BUILD}" > "${stage}/build_path"
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "${BUILD}/CMakeCache.txt" > "${stage}/source_path"
# The data the suites and `tinyrun mnist` read (TG_DATA_DIR there), where present here.
data=${TG_DATA_DIR:-$(realpath -m ../shared/data)}
mkdir -p "${stage}/data"
for d in mnist models; do
  if [[ -d "${data}/${d}" ]]; then cp -r "${data}/${d}" "${stage}/data/"; fi
done

mkdir -p "${OUT}"
tar -C "${stage}" -cf - . | xz -T0 -6 > "${OUT}/bundle.tar.xz"
echo "device-bundle: ${OUT}/bundle.tar.xz ($(du -h "${OUT}/bundle.tar.xz" | cut -f1)) from ${BUILD}:"
echo "  $(find "${stage}/build" -type f | wc -l) files, libraries: $(ls "${stage}/lib" | tr '\n' ' ')"
