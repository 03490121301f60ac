#!/usr/bin/env bash
# Writes bench/results/sass-loops-sm90a-<date>.txt: scripts/sass-loops.py on
# the sm_90a binary of the bundle (.gpu-deps/deps.tgz, scripts/gpu-bundle.sh),
# the one a lent GPU runs, under a header naming the commit and sources it
# was built from (.gpu-deps/SOURCE), the compiler (from the binary) and the
# disassembler. No GPU needed; cuobjdump from a CUDA toolkit or NVIDIA's
# nvidia-cuda-cuobjdump wheel, found where scripts/sass-loops.py looks. Then
#   scripts/lesson-tables.sh --table sass build/bin/lesson04 lessons/04-matmul-ladder/README.md
# prints lesson 04's loop table from the new record.
#   scripts/sass-record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=.gpu-deps
[[ -f $bundle/deps.tgz && -f $bundle/SOURCE ]] ||
  { echo "sass-record: no $bundle/deps.tgz and SOURCE (make them with scripts/gpu-bundle.sh)" >&2; exit 2; }
cuobjdump=""
for where in "$(command -v cuobjdump || true)" "${CUDA_HOME:+$CUDA_HOME/bin/cuobjdump}" /usr/local/cuda/bin/cuobjdump; do
  if [[ -n $where && -x $where ]]; then cuobjdump=$where; break; fi
done
[[ -n $cuobjdump ]] ||
  { echo "sass-record: no cuobjdump (looked on PATH, in \$CUDA_HOME/bin and /usr/local/cuda/bin)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf "$bundle/deps.tgz" -C "$work" --wildcards '*bin/warpnet' 2>/dev/null ||
  { echo "sass-record: $bundle/deps.tgz holds no bin/warpnet (made with --no-binaries?)" >&2; exit 2; }
binary=$work/bin/warpnet
commit=$(awk '$1 == "commit" { print substr($2, 1, 7) }' "$bundle/SOURCE")
uncommitted=$(awk '$1 == "uncommitted" { print $2 }' "$bundle/SOURCE")
sources=$(awk '$1 == "sources" { print $2 }' "$bundle/SOURCE")
# grep stops at the first: strings's broken pipe is no failure here.
nvcc=$(set +o pipefail; strings "$binary" | grep -m1 -o 'Cuda compilation tools, release [0-9.]*, V[0-9.]*' || true)
# Its stderr holds notes for the header, or why it failed.
PATH=$(dirname "$cuobjdump"):$PATH scripts/sass-loops.py "$binary" > "$work/body" 2> "$work/notes" ||
  { cat "$work/notes" >&2; exit 1; }
out=bench/results/sass-loops-sm90a-$(date -u +%F).txt
{
  echo "# scripts/sass-loops.py on the bundle's bin/warpnet: each kernel's main loop, from cuobjdump -sass (static counts, no GPU)"
  echo "# binary: scripts/gpu-bundle.sh's sm_90a build of commit $commit ($uncommitted files uncommitted; sources $sources), ${nvcc:-nvcc of unknown version}"
  echo "# cuobjdump: $("$cuobjdump" --version | tail -1); made $(date -u +%F) on $(nproc) cores of $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  sed 's/^/# /' "$work/notes"
  cat "$work/body"
} > "$out"
chmod 644 "$out"
echo "sass-record: $out ($(grep -c ' math of ' "$out") loops counted, $(grep -c 'wgmma instructions' "$out") wgmma kernels named)"
