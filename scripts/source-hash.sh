#!/usr/bin/env bash
# One hash of the sources a build compiles (src, kernels, datasets, tests,
# the CMake files): scripts/gpu-bundle.sh records it beside the binaries it
# builds, scripts/gpu-check.sh computes it again in the tree it runs in, so a
# record says whether its binaries were built from that tree.
set -euo pipefail
cd "$(dirname "$0")/.."
find src kernels datasets tests CMakeLists.txt CMakePresets.json -type f \
  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name '*.in' \
     -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name 'CMakePresets.json' \) -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
