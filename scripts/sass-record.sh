#!/usr/bin/env bash
# Writes bench/results/sass-loops-sm90a-<date>.txt: scripts/sass-loops.py on
# the sm_90a bundle's binary (scripts/gpu-bundle.sh), with a header naming
# the commit and sources it was built from, the compiler and the
# disassembler. No GPU needed; cuobjdump from a CUDA toolkit or NVIDIA's
# nvidia-cuda-cuobjdump wheel (scripts/sass-loops.py finds it). Then
#   scripts/lesson-tables.sh --table sass build/bin/lesson04 lessons/04-matmul-ladder/README.md
# prints lesson 04's loop table from the new record.
#   scripts/sass-record.sh [BUILD_DIR]   (default build-h200)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-h200}
binary=$build/bin/warpnet
source_file=.gpu-deps/SOURCE
[[ -x $binary ]] || { echo "sass-record: no $binary (build it with scripts/gpu-bundle.sh)" >&2; exit 2; }
[[ -f $source_file ]] || { echo "sass-record: no $source_file (scripts/gpu-bundle.sh writes it)" >&2; exit 2; }
commit=$(awk '$1 == "commit" { print substr($2, 1, 7) }' "$source_file")
sources=$(awk '$1 == "sources" { print $2 }' "$source_file")
nvcc=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")$/\1/p' "$build"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)
cuobjdump=$(command -v cuobjdump || echo "${CUDA_HOME:-/usr/local/cuda}/bin/cuobjdump")  # where sass-loops.py looks
out=bench/results/sass-loops-sm90a-$(date -u +%F).txt
body=$(mktemp) notes=$(mktemp)
trap 'rm -f "$body" "$notes"' EXIT
# Its stderr holds notes for the header, or why it failed.
scripts/sass-loops.py "$binary" > "$body" 2> "$notes" || { cat "$notes" >&2; exit 1; }
{
  echo "# scripts/sass-loops.py $binary: each kernel's main loop, from cuobjdump -sass (static counts, no GPU)"
  echo "# binary: scripts/gpu-bundle.sh's sm_90a build of commit $commit (sources $sources), nvcc $nvcc"
  echo "# cuobjdump: $("$cuobjdump" --version | tail -1); made $(date -u +%F) on $(nproc) cores of $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  sed 's/^/# /' "$notes"
  cat "$body"
} > "$out"
chmod 644 "$out"
echo "sass-record: $out ($(grep -c '^  ' "$out") kernels counted)"
