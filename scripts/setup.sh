#!/usr/bin/env bash
# Installs what warpnet needs on Debian 12 (bookworm) or later: a compiler,
# CMake, Ninja and the libraries CMake finds, plus the Fashion-MNIST data set.
# Runs as root, or through sudo when not root. Does nothing when all is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev            # CPU reference ops (GEMM)
  doctest-dev              # tests
  libcli11-dev             # the warpnet command line
  nlohmann-json3-dev       # JSON records and reports
  zlib1g-dev               # gzip'd IDX files, checkpoint checksums
  libboost-context-dev     # fibers for the SIMT emulator
  libopenblas-dev          # only as a benchmark peer for Eigen's SGEMM
  dataset-fashion-mnist    # /usr/share/datasets/fashion-mnist
  libopenmpi-dev           # train --data-parallel: MPI (optional to the build; without it one process only)
  openmpi-bin              # mpirun, for data-parallel training, bench allreduce and their tests
  libimgui-dev             # warpnet-viz: Dear ImGui 1.86 with its GLFW and OpenGL 3 backends
  libglfw3-dev             # warpnet-viz: the window and its OpenGL context
  libstb-dev               # warpnet-viz: stb_image_write, the PNG of --screenshot (and the tests' reader)
  libgl1-mesa-dri          # warpnet-viz: Mesa's llvmpipe, OpenGL without a GPU (under Xvfb)
  xvfb                     # warpnet-viz: a display for the headless screenshot tests
  xauth                    # warpnet-viz: xvfb-run needs it
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
  as_root=(sudo)
fi
echo "setup: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
# Through env: sudo's env_reset would drop a variable set before it, and apt could stop to ask.
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
