#!/usr/bin/env bash
# Packs what a bare GPU machine lacks into .gpu-deps/ (ignored by git), for
# scripts/gpu-check.sh there: that machine has nvcc, CMake, ninja and a
# compiler but no package registry (DESIGN "Measuring"; the device tool's
# README). Run it here, on a machine where scripts/setup.sh has installed the
# Debian packages and the CUDA toolkit is found; then name .gpu-deps in the
# run's `carry`.
#
#   bin/:        warpnet and test_gpu built HERE for sm_90a (build-h200/), so
#                the lease's minutes go to measuring, not compiling. Built
#                for a portable CPU (x86-64-v3, not -march=native), without
#                MPI, OpenBLAS or GLFW (not on that machine); the CUDA
#                libraries (cudart, cuBLAS, cuDNN) are found there at run time.
#   lib/:        the non-system libraries bin/ links (libgomp, libz).
#   for a build there, should bin/ not start (another C library, say):
#     header-only: Eigen, doctest, CLI11, nlohmann-json, the Boost headers
#                  that Boost.Context needs (found by asking g++, not all 160 MB)
#     static:      libboost_context.a, libz.a (+ zlib.h)
#     CMake:       each package's config files, laid out as under /usr so their
#                  relative paths hold (doctest's, which names /usr, is rewritten)
#
#   scripts/gpu-bundle.sh              all of it (the sm_90a build: ~10 min on 2 cores from a clean tree)
#   scripts/gpu-bundle.sh --no-binaries  the build-there parts only
#
# All of it is packed into one compressed tarball, .gpu-deps/deps.tgz
# (gpu-check.sh unpacks it under /tmp there): the two binaries alone came to
# 83 MiB unpacked on 2026-12-05, the whole to 30 MiB packed. Beside
# it, .gpu-deps/SOURCE names the commit and a hash of the sources the
# binaries were built from, which gpu-check.sh compares with the tree it runs
# in and writes into every record.
#
# The whole working tree plus carried paths must stay under 64 MiB; this
# prints the bundle's size and fails past 50 MiB. The old bundle stays until
# the new one is complete.
set -euo pipefail
cd "$(dirname "$0")/.."
binaries=1
[ "${1:-}" = --no-binaries ] && binaries=0
final=.gpu-deps
out=$(mktemp -d "${TMPDIR:-/tmp}/gpu-deps.XXXXXX")  # staged, packed at the end
packed=""
trap 'rm -rf "$out" ${packed:+"$packed"}' EXIT
# The sources the binaries are built from, hashed before the build: an edit
# during its 30 minutes must not be labelled as built.
sources=$(scripts/source-hash.sh)
arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
mkdir -p "$out/include" "$out/lib/$arch/cmake" "$out/lib/cmake" "$out/share/cmake"

need() { [ -e "$1" ] || { echo "gpu-bundle: missing $1 (run scripts/setup.sh)" >&2; exit 1; }; }
# Boost's version is the Debian release's (1.74 on 12, 1.83 on 13): read it
# from the CMake package setup.sh installed, the one directory named Boost-X.Y.Z.
boost_dirs=(/usr/lib/$arch/cmake/Boost-*)
[ -d "${boost_dirs[0]}" ] || { echo "gpu-bundle: missing /usr/lib/$arch/cmake/Boost-<version> (run scripts/setup.sh)" >&2; exit 1; }
[ "${#boost_dirs[@]}" = 1 ] ||
  { echo "gpu-bundle: more than one Boost CMake package, cannot tell which to carry: ${boost_dirs[*]}" >&2; exit 1; }
boost_version=${boost_dirs[0]##*/Boost-}
for f in /usr/include/eigen3 /usr/include/doctest /usr/include/CLI /usr/include/nlohmann /usr/include/zlib.h \
         /usr/lib/$arch/libboost_context.a /usr/lib/$arch/libz.a /usr/lib/$arch/cmake/boost_context-$boost_version \
         /usr/lib/$arch/cmake/boost_headers-$boost_version; do
  need "$f"
done

# Header-only libraries and their CMake config files.
cp -r /usr/include/eigen3 /usr/include/doctest /usr/include/CLI /usr/include/nlohmann "$out/include/"
cp /usr/include/zlib.h /usr/include/zconf.h "$out/include/"
mkdir -p "$out/share/eigen3"
cp -r /usr/share/eigen3/cmake "$out/share/eigen3/"
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$out/share/cmake/"
cp -r /usr/lib/cmake/doctest "$out/lib/cmake/"
# doctest's targets file says `set(_IMPORT_PREFIX "/usr")`: make it relative.
sed -i 's|^set(_IMPORT_PREFIX "/usr")|get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)|' \
  "$out/lib/cmake/doctest/doctestTargets.cmake"
grep -q 'CMAKE_CURRENT_LIST_DIR}/../../..' "$out/lib/cmake/doctest/doctestTargets.cmake" ||
  { echo "gpu-bundle: could not make doctest's CMake files relocatable" >&2; exit 1; }

# Boost: the headers the emulator's includes pull in, transitively.
probe=$(mktemp --suffix=.cpp)
printf '#include <boost/context/fiber.hpp>\n#include <boost/context/protected_fixedsize_stack.hpp>\n#include <boost/context/detail/exception.hpp>\n' >"$probe"
g++ -std=c++20 -M "$probe" | tr ' \\' '\n\n' | grep '^/usr/include/boost/' | sort -u |
  while read -r h; do
    dest="$out/include/${h#/usr/include/}"
    mkdir -p "$(dirname "$dest")"
    cp "$h" "$dest"
  done
# Whole config/ and predef/: another compiler there may pick other headers of them.
cp -r /usr/include/boost/config /usr/include/boost/predef "$out/include/boost/"
cp /usr/include/boost/config.hpp /usr/include/boost/predef.h "$out/include/boost/"
# Check: with the bundle first on the include path, no Boost header may come from /usr.
if g++ -std=c++20 -O2 -march=native -DNDEBUG -I"$out/include" -M "$probe" | tr ' \\' '\n\n' | grep -q '^/usr/include/boost/'; then
  echo "gpu-bundle: some Boost header is missing from the bundle" >&2
  exit 1
fi
rm -f "$probe"
# Boost.Context, static, with its CMake files (only the static variant: the
# build links it with -DBoost_USE_STATIC_LIBS=ON).
cp /usr/lib/$arch/libboost_context.a /usr/lib/$arch/libz.a "$out/lib/$arch/"
for d in Boost-$boost_version boost_context-$boost_version boost_headers-$boost_version \
         BoostDetectToolset-$boost_version.cmake; do
  if [ -e "/usr/lib/$arch/cmake/$d" ]; then cp -r "/usr/lib/$arch/cmake/$d" "$out/lib/$arch/cmake/"; fi
done
rm -f "$out/lib/$arch/cmake/boost_context-$boost_version/libboost_context-variant-shared.cmake"

# The binaries: a Release build for sm_90a only (H100/H200), kept between runs.
if [ "$binaries" = 1 ]; then
  build=build-h200
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DWARPNET_BUILD_BENCH=OFF -DWARPNET_NATIVE=OFF -DCMAKE_CXX_FLAGS="-march=x86-64-v3" \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_glfw3=ON -DBoost_USE_STATIC_LIBS=ON >/dev/null
  grep -q "CMAKE_CUDA_COMPILER:.*nvcc" "$build/CMakeCache.txt" ||
    { echo "gpu-bundle: CMake found no CUDA compiler: the binaries need one (or use --no-binaries)" >&2; exit 1; }
  # ptxas's C7515 (wgmmas serialized because other instructions write their
  # accumulators inside the pipeline) is an info, not an error, and costs a
  # wgmma kernel most of its speed: a bundle with it would time the slow path.
  # Only the files this build compiles are seen.
  cmake --build "$build" --target warpnet test_gpu 2>&1 | tee "$build/gpu-bundle-build.log"
  if grep "C7515" "$build/gpu-bundle-build.log" >&2; then
    echo "gpu-bundle: ptxas serialized a kernel's wgmmas (C7515, above)" >&2
    exit 1
  fi
  mkdir -p "$out/bin" "$out/lib/runtime"
  for b in warpnet test_gpu; do
    cp "$build/bin/$b" "$out/bin/"
    strip --strip-debug "$out/bin/$b"
  done
  # Libraries outside the C/C++ runtime and CUDA that the binaries need.
  ldd "$out/bin/warpnet" "$out/bin/test_gpu" | awk '/=>/ {print $3}' | sort -u |
    grep -E '/lib(gomp|z)\.so' | xargs -r -I{} cp -L {} "$out/lib/runtime/"
  ldd "$out/bin/warpnet" | awk '/=>/ {print $1}' | grep -Ev '^(libcud|libcublas|libc\.|libm\.|libstdc|libgcc_s|libgomp|libz\.|libdl|libpthread|librt|ld-linux)' &&
    { echo "gpu-bundle: warpnet links a library the GPU machine may lack (above)" >&2; exit 1; }
  echo "gpu-bundle: bin/ from $build: $(ls "$out/bin" | tr '\n' ' ')"
fi

# What the binaries were built from: scripts/source-hash.sh there must give
# the same hash, or the records say the binaries are stale.
{
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "uncommitted $(git status --porcelain 2>/dev/null | wc -l) files"
  echo "sources $sources"
} >"$out/SOURCE"

packed=$(mktemp -d "${TMPDIR:-/tmp}/gpu-deps-packed.XXXXXX")
tar czf "$packed/deps.tgz" -C "$out" --exclude=SOURCE .
cp "$out/SOURCE" "$packed/"
unpacked_kb=$(du -sk "$out" | cut -f1)
size_kb=$(du -sk "$packed" | cut -f1)
files=$(find "$out" -type f | wc -l)
echo "gpu-bundle: deps.tgz: $((size_kb / 1024)) MiB ($((unpacked_kb / 1024)) MiB unpacked, $files files)"
if [ "$size_kb" -gt $((50 * 1024)) ]; then
  rm -rf "$packed"
  echo "gpu-bundle: too large to carry beside the working tree (64 MiB in all); $final left as it was" >&2
  exit 1
fi
rm -rf "$final"
chmod 755 "$packed"
mv "$packed" "$final"
packed=""
cat "$final/SOURCE"
