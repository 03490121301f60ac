#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (an H200; DESIGN "Measuring").
# Runs in the repository root of a copy of the working tree:
#   1. says what the machine has (GPU, driver, nvcc, CMake, cores);
#   2. configures a Release build for the GPU's architecture with the
#      dependencies carried in .gpu-deps/ (scripts/gpu-bundle.sh packs them
#      here; the machine has no package registry);
#   3. builds only `warpnet` and `test_gpu`, on all cores;
#   4. runs the gpu-labelled tests (ctest -L gpu): every CUDA kernel against
#      the CPU reference at its op's test sizes;
#   5. runs `warpnet bench` for every op, writing the JSON record;
#   6. runs `warpnet bench precision` on the GPU (one matmul in each format:
#      the FP8/BF16 and BF16/FP32 throughput ratios), its own JSON record;
#   7. prints a short table last.
# Results go to $OUT (the device tool's folder that comes back; default
# ./gpu-check-out): <gpu>-<date>.json (copy it to bench/results/), the ctest
# log and this script's whole log. Each phase has its own time limit and the
# whole run stays under 8 minutes; each phase prints the time elapsed. A
# failing phase is reported and the script goes on where it can.
#
# Settings (environment):
#   WARPNET_CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES, default "90a": H100/H200's
#                       arch-specific target, a superset of sm_90 that runs on
#                       exactly those GPUs (wgmma/TMA files are built for it
#                       whatever this says, src/device/CMakeLists.txt).
#   BUILD               build folder, default /tmp/warpnet-gpu-build
#   BENCH_ARGS          arguments for `warpnet bench`, default "matmul conv2d softmax train":
#                       the ops the issues set targets for, in that order, so a
#                       run cut short by the time limit keeps the first ones
#                       (e.g. "matmul --size 4096,4096,4096"; "" for every op)
#   JOBS                build jobs, default all cores
#   TIME_SCALE          multiplies every phase's time limit (default 1; a dry
#                       run on a 2-core machine without a GPU needs ~10)
#
# The exact device-tool call is in bench/README.md ("On a lent GPU").
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-$root/gpu-check-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-check.log") 2>&1

t0=$(date +%s)
phase() { echo; echo "== [$(($(date +%s) - t0)) s] $*"; }
status=()  # "phase: result" lines for the closing table
note() { status+=("$1"); }

ARCHS=${WARPNET_CUDA_ARCHS:-90a}
BUILD=${BUILD:-/tmp/warpnet-gpu-build}
JOBS=${JOBS:-$(nproc)}
TIME_SCALE=${TIME_SCALE:-1}
limit() { echo $(($1 * TIME_SCALE)); }
deps=$root/.gpu-deps
date_utc=$(date -u +%Y-%m-%d)

phase "machine"
timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader ||
  echo "nvidia-smi: not available or failed (the bench's own probe says what CUDA sees)"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvcc --version | tail -2 || echo "nvcc: not found"
cmake --version | head -1
g++ --version | head -1 || echo "g++: not found"
echo "cores: $(nproc); CUDA architectures: $ARCHS; build: $BUILD"
gpu=$(timeout 20 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu_slug=$(echo "${gpu:-no-gpu}" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
record="$OUT/$gpu_slug-$date_utc.json"

phase "configure (Release, sm_$ARCHS)"
cmake_deps=()
if [ -d "$deps" ]; then
  arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  echo "dependencies: carried in $deps"
  cmake_deps=(-DCMAKE_PREFIX_PATH="$deps" -DZLIB_ROOT="$deps" -DBoost_USE_STATIC_LIBS=ON
              -DBoost_DIR="$deps/lib/$arch/cmake/Boost-1.74.0" -DBoost_NO_SYSTEM_PATHS=ON)
else
  echo "dependencies: none carried (.gpu-deps missing); using the system's"
fi
ninja=()
command -v ninja >/dev/null && ninja=(-G Ninja)
if timeout $(limit 90) cmake -S "$root" -B "$BUILD" "${ninja[@]}" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DWARPNET_BUILD_BENCH=OFF "${cmake_deps[@]}" >"$OUT/configure.log" 2>&1; then
  grep -E "warpnet:|Found (Boost|ZLIB|Eigen|CUDAToolkit)" "$OUT/configure.log" || true
  rm -f "$OUT/configure.log"
  note "configure: ok"
else
  tail -40 "$OUT/configure.log"
  note "configure: FAILED (configure.log)"
  phase "stopping: nothing to build"
  printf '%s\n' "${status[@]}"
  exit 1
fi

phase "build warpnet test_gpu (-j$JOBS)"
if timeout $(limit 330) cmake --build "$BUILD" --target warpnet test_gpu -j"$JOBS" >"$OUT/build.log" 2>&1; then
  grep -iE "warning" "$OUT/build.log" | head -20 || true
  rm -f "$OUT/build.log"
  note "build: ok ($(($(date +%s) - t0)) s since start)"
else
  grep -E "error|Error|FAILED" "$OUT/build.log" | head -40
  tail -20 "$OUT/build.log"
  note "build: FAILED (build.log)"
fi

phase "ctest -L gpu"
if [ -x "$BUILD/bin/test_gpu" ]; then
  (cd "$BUILD" && timeout $(limit 120) ctest -L gpu --output-on-failure --timeout $(limit 110)) 2>&1 | tee "$OUT/ctest-gpu.log"
  rc=${PIPESTATUS[0]}
  summary=$(grep -E "tests passed|tests failed" "$OUT/ctest-gpu.log" | head -1)
  if grep -q "(Skipped)" "$OUT/ctest-gpu.log"; then
    note "ctest -L gpu: SKIPPED: $("$BUILD/bin/test_gpu" 2>&1 | head -1)"
  elif [ "$rc" -eq 0 ]; then
    note "ctest -L gpu: ok ($summary)"
  else
    note "ctest -L gpu: FAILED rc=$rc ($summary)"
  fi
else
  note "ctest -L gpu: not run (no test_gpu)"
fi

BENCH_ARGS=${BENCH_ARGS-matmul conv2d softmax train}
phase "warpnet bench ${BENCH_ARGS:-(every op)} -> $record"
if [ -x "$BUILD/bin/warpnet" ]; then
  left=$(($(limit 400) - ($(date +%s) - t0)))
  [ "$left" -lt 30 ] && left=30
  echo "time left for the bench: $left s"
  # shellcheck disable=SC2086
  timeout "$left" "$BUILD/bin/warpnet" bench ${BENCH_ARGS:-} --json "$record"
  rc=$?
  [ "$rc" -eq 0 ] && note "bench: ok" || note "bench: rc=$rc (124: out of time; 1: a version failed, see the table)"
  # Also where the record belongs (a copy of the tree there: fetch it from $OUT).
  [ -n "$gpu" ] && [ -f "$record" ] && cp -f "$record" "$root/bench/results/"
else
  note "bench: not run (no warpnet binary)"
fi

precision_record="$OUT/precision-${record##*/}"
phase "warpnet bench precision -> $precision_record"
if [ -x "$BUILD/bin/warpnet" ]; then
  left=$(($(limit 470) - ($(date +%s) - t0)))
  [ "$left" -lt 30 ] && left=30
  timeout "$left" "$BUILD/bin/warpnet" bench precision --backends cuda --gpu-size 8192,8192,8192 \
    --json "$precision_record"
  rc=$?
  [ "$rc" -eq 0 ] && note "bench precision: ok" || note "bench precision: rc=$rc (124: out of time)"
  [ -n "$gpu" ] && [ -f "$precision_record" ] && cp -f "$precision_record" "$root/bench/results/"
else
  note "bench precision: not run (no warpnet binary)"
fi

phase "summary"
if [ -f "$record" ] && command -v python3 >/dev/null; then
  python3 - "$record" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
g = rec.get("gpu", {})
print(f"{g.get('name', 'no GPU')}  driver {g.get('driver', '-')}  cuBLAS {g.get('cublas', '-')}  {rec['date']}")
def f(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"
for op in rec["ops"]:
    if op["op"] == "train":
        rates = {w: op[w].get("images_per_second") for w in ("cpu", "gpu")}
        print(f"train {op['model']} batch {op['batch_size']}: cpu {f(rates['cpu'], '.0f')} img/s, "
              f"gpu {f(rates['gpu'], '.0f')} img/s, speed-up {f(op.get('gpu_speedup_over_cpu'), '.1f')}x, "
              f"graph over none {f(op.get('graph_speedup'), '.2f')}x")
        if "error" in op.get("gpu", {}):
            print(f"  gpu (graph) failed: {op['gpu']['error']}")
        continue
    size = "x".join(str(s) for s in op["sizes"][:3]) + ("" if not any(op["sizes"][3:]) else " T" + "".join(str(s) for s in op["sizes"][3:]))
    print(f"{op['op']} {size}")
    for r in op["gpu"].get("kernels", []):
        t = (r.get("timing") or {}).get("median_ms")
        print(f"  {r['kernel']:<26} {r['input_format']:<5} {r['status']:<7} {f(t, '9.3f')} ms {f(r.get('tflops'), '7.1f')} TFLOP/s "
              f"{f(r.get('percent_of_vendor'), '6.1f')}% vendor {f(r.get('percent_of_peak'), '5.1f')}% peak "
              f"{f(r.get('percent_of_copy'), '5.1f')}% copy")
    if "skipped" in op["gpu"]:
        print(f"  GPU skipped: {op['gpu']['skipped']}")
    for r in op["cpu"].get("rows", []):
        print(f"  cpu {r['library']:<22} fp32  {'':7} {f(r['timing']['median_ms'], '9.3f')} ms")
PY
fi
if [ -f "$precision_record" ] && command -v python3 >/dev/null; then
  python3 - "$precision_record" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
for name, target in (("fp8_over_bf16", 1.8), ("bf16_over_fp32", 10.0)):
    r = rec.get("ratios", {}).get(name)
    print(f"precision {name}: " + (f"{r['ratio']:.2f}x ({' / '.join(r['kernels'])}; target >= {target}x)" if r else "not measured"))
PY
fi
printf '%s\n' "${status[@]}"
echo "elapsed: $(($(date +%s) - t0)) s; results in $OUT: $(ls "$OUT" | tr '\n' ' ')"
