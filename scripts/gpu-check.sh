#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (an H200; DESIGN "Measuring").
# Runs in the repository root of a copy of the working tree:
#   1. says what the machine has (GPU, driver, clocks, nvcc, CPU, cores);
#   2. takes warpnet and test_gpu prebuilt for sm_90a from .gpu-deps/deps.tgz
#      (scripts/gpu-bundle.sh builds them here: the lease's minutes go to
#      measuring; unpacked under /tmp), with the CUDA libraries found on that
#      machine (the toolkit's, or the ones PyTorch's wheels carry: cuDNN is
#      not part of the toolkit); only if they cannot start there, builds them
#      there with the dependencies carried in the same tarball (the machine
#      has no package registry), and then runs only the test and precision
#      phases (the build takes most of the time);
#   3. runs test_gpu (the gpu-labelled tests): every CUDA kernel against
#      the CPU reference at its op's test sizes;
#   4. runs `warpnet bench` for the ops the issues set targets for, writing
#      the JSON record <gpu>-<date>.json;
#   5. runs `warpnet bench train` (LeNet-5) with 2 CPU threads, the 2-core
#      CPU the GPU is compared with, its own record train-<gpu>-<date>.json,
#      and every conv, dgrad and wgrad version at LeNet-5's two conv layers
#      (batch 256) against cuDNN, lenet-conv-<gpu>-<date>.json;
#   6. runs `warpnet bench precision` on the GPU (one matmul in each format:
#      the FP8/BF16 and BF16/FP32 throughput ratios), precision-<gpu>-<date>.json,
#      and again for bf16 and fp8 with B stored (N,K) (--trans-b: fp8's native
#      layout), precision-tn-<gpu>-<date>.json;
#   7. lists each kernel's matrix instructions and spills (cuobjdump -sass);
#   8. (only when PHASES names it) times each kernel of a LeNet-5 training
#      step with Nsight Compute (ncu-lenet.csv): where a step's time goes;
#      and ("ncu-matmul") profiles one launch of each of the matmul versions
#      in NCU_MATMUL_KERNELS at 4096^3 with all of Nsight Compute's sections
#      (ncu-matmul-<version>.csv): what holds the FP32, WMMA and mma.sync
#      rungs below their targets;
#   9. prints a short table last.
# The phases run in the order a cut costs least: test, precision (its
# records are written at the end), train, ncu, lenet, bench (whose records
# are rewritten after every size, so a cut keeps what was measured), sass.
# Each has its own time limit, and none runs past DEADLINE seconds from the
# start (a phase with under 15 s left is skipped and says so); each prints
# the time elapsed. A failing phase is reported and the script goes on.
# Results go to $OUT (the device tool's folder that comes back, at most 8
# files; default ./gpu-check-out): the JSON records (copy them to
# bench/results/), this script's whole log, and one logs-<gpu>-<date>.tgz of
# the rest (test-gpu.log, the sass summary, ncu's CSV, a failed build's
# log). Every record names the sources its binary was built from when it is
# written ("sources": scripts/source-hash.sh's hash and the git commit, kept
# even if the run is cut off), and at the end gets a "source" field: the
# hash of this tree's sources and of those the binaries were built from.
#
# Settings (environment):
#   WARPNET_CUDA_ARCHS  for a build there: CMAKE_CUDA_ARCHITECTURES, default
#                       "90a" (H100/H200's arch-specific target, a superset of
#                       sm_90; wgmma/TMA files are built for it whatever this
#                       says, src/device/CMakeLists.txt)
#   BUILD               build folder there, default /tmp/warpnet-gpu-build
#   FORCE_BUILD         1: build there even when .gpu-deps/bin starts
#   BENCH_ARGS          arguments for `warpnet bench`, default "matmul
#                       conv2d_nhwc conv2d peak lenet5_step softmax": the ops the
#                       issues set targets for (conv2d_nhwc: conv v13-v15, bf16 on
#                       wgmma, against cuDNN's bf16, and v16, fp32 fed by TMA,
#                       against cuDNN's fp32, never yet timed), peak (the
#                       ceilings of matmul's inner-loop instructions, a few
#                       seconds) and LeNet-5's fused step (the kernels of `train
#                       --fused-step` alone, at batch 64 and 256), softmax (its
#                       target met on 2026-12-04) last, in that order, so a run
#                       cut short by the time limit keeps the first ones
#                       (e.g. "matmul --size 4096,4096,4096"; "" for every op)
#   TRAIN_ARGS          arguments for `warpnet bench train`, default
#                       "--model lenet5 --threads 2 --batch 64,256,1024
#                       --epoch-seconds 0.5" (the speed-up at three batch
#                       sizes, one record; the GPU's epochs timed in groups of
#                       half a second, which fits the phase's 120 s)
#   LENET_CONV_ARGS     arguments for the "lenet" phase's `warpnet bench`, default
#                       "conv2d conv2d_dgrad conv2d_wgrad" at LeNet-5's conv1 and
#                       conv2 at batch 256
#   PHASES              which phases run, default "test bench train lenet precision sass"
#                       (add "ncu" for the per-kernel times of a LeNet-5 step,
#                       "ncu-matmul" for the matmul versions' profiles,
#                       "ncu-vendor" for the launch shapes of cuBLAS's GEMMs)
#   NCU_MATMUL_KERNELS  the "ncu-matmul" phase's versions, default "9 12 16 17 19 20 21 22 23 24"
#   NCU_TRAIN_BATCH     the "ncu" phase's batch size, default 64
#   RECORD_TAG          appended to the records' names (<gpu>-<date>-<tag>.json),
#                       so a second run the same day keeps the first's
#   JOBS                build jobs, default all cores
#   TIME_SCALE          multiplies every phase's time limit (default 1; a dry
#                       run on a 2-core machine without a GPU needs ~10)
#   DEADLINE            seconds from the start after which no phase runs,
#                       default 480 (scaled by TIME_SCALE too): with the
#                       machine's start and the transfers, a 540 s device call
#                       leaves time for a rerun
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
elapsed() { echo $(($(date +%s) - t0)); }
status=()  # "phase: result" lines for the closing table
note() { status+=("$1"); }

ARCHS=${WARPNET_CUDA_ARCHS:-90a}
BUILD=${BUILD:-/tmp/warpnet-gpu-build}
JOBS=${JOBS:-$(nproc)}
TIME_SCALE=${TIME_SCALE:-1}
DEADLINE=${DEADLINE:-480}
# Shell arithmetic is whole numbers: a TIME_SCALE of 1.5 gave every phase an empty limit, each then "SKIPPED".
for setting in TIME_SCALE DEADLINE; do
  [[ ${!setting} =~ ^[0-9]+$ ]] || { echo "gpu-check: $setting=${!setting}: a whole number of seconds (or times)" >&2; exit 2; }
done
limit() { echo $(($1 * TIME_SCALE)); }
# run_capped LIMIT CMD...: CMD under a time limit of LIMIT seconds or what
# is left before the deadline, whichever is less; returns 125 without running
# it when under 15 s are left.
run_capped() {
  local cap left
  cap=$(limit "$1")
  shift
  left=$(($(limit "$DEADLINE") - $(elapsed)))
  [ "$left" -lt "$cap" ] && cap=$left
  if [ "$cap" -lt 15 ]; then
    echo "skipped: $cap s left before the deadline ($DEADLINE s)" >&2
    return 125
  fi
  timeout -k 10 "$cap" "$@"
}
# "ok", or why not, for the closing table.
outcome() {
  case $1 in
    0) echo "ok" ;;
    124 | 137) echo "OUT OF TIME (rc=$1)" ;;
    125) echo "SKIPPED (deadline)" ;;
    *) echo "rc=$1${2:+ ($2)}" ;;
  esac
}
date_utc=$(date -u +%Y-%m-%d)

# The bundle (scripts/gpu-bundle.sh): one tarball, unpacked outside the tree.
deps=/tmp/warpnet-gpu-deps
rm -rf "$deps"
mkdir -p "$deps"
if [ -f "$root/.gpu-deps/deps.tgz" ]; then
  tar xzf "$root/.gpu-deps/deps.tgz" -C "$deps" || echo "could not unpack .gpu-deps/deps.tgz"
else
  echo ".gpu-deps/deps.tgz: not carried (scripts/gpu-bundle.sh makes it)"
fi
source_here=$(timeout 60 "$root/scripts/source-hash.sh" 2>/dev/null || echo unknown)
built_from=$(sed -n 's/^sources //p' "$root/.gpu-deps/SOURCE" 2>/dev/null)
echo "sources here: $source_here; the bundle's binaries: ${built_from:-none}"
[ -f "$root/.gpu-deps/SOURCE" ] && cat "$root/.gpu-deps/SOURCE"

phase "machine"
# The clocks, temperature and power when the script starts and after its
# last bench go into every record (nvidia_smi): the machine's state around
# all its figures, not each phase's own.
smi_fields=name,driver_version,memory.total,clocks.max.sm,clocks.sm,clocks.mem,temperature.gpu,power.draw
if smi_start=$(timeout 20 nvidia-smi --query-gpu=$smi_fields --format=csv 2>/dev/null); then
  echo "$smi_start"
else
  smi_start=""  # what a failing nvidia-smi prints is not data
  echo "nvidia-smi: not available or failed (the bench's own probe says what CUDA sees)"
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvcc --version | tail -2 || echo "nvcc: not found"
cmake --version | head -1
g++ --version | head -1 || echo "g++: not found"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); cores: $(nproc)"
gpu=$(timeout 20 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu_slug=$(echo "${gpu:-no-gpu}" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
record="$OUT/$gpu_slug-$date_utc${RECORD_TAG:+-$RECORD_TAG}.json"
PHASES=${PHASES:-test bench train lenet precision sass}
want() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
echo "phases: $PHASES"
# sm_90a code runs only on compute capability 9.0 (H100, H200): another GPU
# would spend the lease on failures. When nvidia-smi says nothing (missing,
# or a driver without compute_cap), the binaries' own probe decides.
cc=$(timeout 20 nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')
if [ -n "$cc" ] && [ "$ARCHS" = 90a ] && [ "$cc" != 9.0 ]; then
  phase "stopping: $gpu has compute capability $cc; these binaries need 9.0 (H100/H200)"
  exit 2
fi

# The CUDA libraries the binaries link, wherever this machine keeps them:
# the toolkit's lib64, or the nvidia-* wheels beside PyTorch. Their folders go
# on LD_LIBRARY_PATH, then the carried runtime libraries (.gpu-deps/lib/runtime).
phase "CUDA libraries"
cuda_lib_path=""
for name in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
  found=$(find /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets /usr/lib/x86_64-linux-gnu \
               /opt /usr/local/lib -name "$name" 2>/dev/null | head -1)
  if [ -n "$found" ]; then
    dir=$(dirname "$found")
    echo "$name: $found"
    case ":$cuda_lib_path:" in *":$dir:"*) ;; *) cuda_lib_path=${cuda_lib_path:+$cuda_lib_path:}$dir ;; esac
  else
    echo "$name: NOT FOUND"
  fi
done
export LD_LIBRARY_PATH=${cuda_lib_path}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:$deps/lib/runtime

phase "binaries"
BIN=""
if [ "${FORCE_BUILD:-0}" != 1 ] && [ -x "$deps/bin/warpnet" ]; then
  missing=$(ldd "$deps/bin/warpnet" "$deps/bin/test_gpu" 2>&1 | grep "not found" | sort -u)
  if [ -z "$missing" ] && timeout -k 5 20 "$deps/bin/warpnet" --version; then
    BIN=$deps/bin
    note "binaries: prebuilt (.gpu-deps/deps.tgz, sm_90a, built by scripts/gpu-bundle.sh)"
    [ "$built_from" != "$source_here" ] &&
      note "binaries: STALE: built from sources $built_from, this tree's are $source_here (rerun scripts/gpu-bundle.sh)"
  else
    echo "the prebuilt binaries cannot start here: ${missing:-warpnet --version failed}; building"
  fi
fi
if [ -z "$BIN" ]; then
  phase "configure (Release, sm_$ARCHS)"
  cmake_deps=()
  if [ -d "$deps/include" ]; then
    arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
    echo "dependencies: carried in $deps"
    boost_dirs=("$deps/lib/$arch/cmake"/Boost-*)  # one: the version gpu-bundle.sh found where it ran
    cmake_deps=(-DCMAKE_PREFIX_PATH="$deps" -DZLIB_ROOT="$deps" -DBoost_USE_STATIC_LIBS=ON
                -DBoost_DIR="${boost_dirs[0]}" -DBoost_NO_SYSTEM_PATHS=ON)
  else
    echo "dependencies: none carried (.gpu-deps missing); using the system's"
  fi
  # cuDNN from a wheel has no unversioned libcudnn.so for find_library: name it.
  cudnn=$(find /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets /usr/lib/x86_64-linux-gnu /opt \
    /usr/local/lib -name libcudnn.so.9 2>/dev/null | head -1)
  if [ -n "$cudnn" ] && [ -f "$(dirname "$cudnn")/../include/cudnn.h" ]; then
    cmake_deps+=(-DWARPNET_CUDNN_LIBRARY="$cudnn" -DWARPNET_CUDNN_INCLUDE_DIR="$(dirname "$cudnn")/../include")
  fi
  ninja=()
  command -v ninja >/dev/null && ninja=(-G Ninja)
  if timeout -k 10 "$(limit 90)" cmake -S "$root" -B "$BUILD" "${ninja[@]}" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DWARPNET_BUILD_BENCH=OFF -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
       -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_DISABLE_FIND_PACKAGE_glfw3=ON "${cmake_deps[@]}" \
       >"$OUT/configure.log" 2>&1; then
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
  if run_capped 330 cmake --build "$BUILD" --target warpnet test_gpu -j"$JOBS" >"$OUT/build.log" 2>&1; then
    grep -iE "warning" "$OUT/build.log" | head -20 || true
    rm -f "$OUT/build.log"
    note "build: ok ($(elapsed) s since start)"
  else
    grep -E "error|Error|FAILED" "$OUT/build.log" | head -40
    tail -20 "$OUT/build.log"
    note "build: FAILED (build.log)"
  fi
  BIN=$BUILD/bin
  # The build took most of the time: the tests and the precision ratios only.
  PHASES=$(for p in test precision; do want "$p" && printf '%s ' "$p"; done)
  note "phases after a build here: ${PHASES:-none}"
  built_from="built here"
fi
[ -x "$BIN/warpnet" ] && timeout -k 5 20 "$BIN/warpnet" info | head -20

if ! want test; then
  :
elif [ -x "$BIN/test_gpu" ]; then
  phase "test_gpu (ctest -L gpu's test)"
  run_capped 120 "$BIN/test_gpu" 2>&1 | tee "$OUT/test-gpu.log" | tail -25
  rc=${PIPESTATUS[0]}
  summary=$(grep -E "test cases:" "$OUT/test-gpu.log" | tail -1)
  case $rc in
    0) note "test_gpu: ok ($summary)" ;;
    77) note "test_gpu: SKIPPED: $(head -1 "$OUT/test-gpu.log")" ;;
    *) note "test_gpu: $(outcome "$rc" FAILED) ($summary)" ;;
  esac
else
  note "test_gpu: not run (no binary)"
fi

# The precision records are written at their end: they go before the benches
# whose records grow size by size.
precision_record="$OUT/precision-${record##*/}"
tn_record="$OUT/precision-tn-${record##*/}"
if ! want precision; then
  :
elif [ -x "$BIN/warpnet" ]; then
  phase "warpnet bench precision -> $precision_record"
  run_capped 100 "$BIN/warpnet" bench precision --backends cuda --gpu-size 8192,8192,8192 --json "$precision_record"
  note "bench precision: $(outcome $?)"
  # The FP8/BF16 ratio again with B stored (N,K): a linear layer's layout and
  # fp8's native one (no repacking on either side); bf16 and fp8 only.
  phase "warpnet bench precision --trans-b (bf16, e4m3) -> $tn_record"
  run_capped 60 "$BIN/warpnet" bench precision --backends cuda --gpu-size 8192,8192,8192 \
    --trans-b --precisions bf16,e4m3 --json "$tn_record"
  note "bench precision --trans-b: $(outcome $?)"
else
  note "bench precision: not run (no warpnet binary)"
fi

TRAIN_ARGS=${TRAIN_ARGS-"--model lenet5 --threads 2 --batch 64,256,1024 --epoch-seconds 0.5"}
train_record="$OUT/train-${record##*/}"
if want train && [ -x "$BIN/warpnet" ]; then
  phase "warpnet bench train $TRAIN_ARGS -> $train_record"
  # shellcheck disable=SC2086
  # 44 s on 2026-12-04 before the fused step's two runs; the record is
  # written after each measurement, so a cut keeps what was measured.
  run_capped 120 "$BIN/warpnet" bench train $TRAIN_ARGS --json "$train_record"
  note "bench train: $(outcome $?)"
fi

# Where a LeNet-5 training step's time goes: every kernel of a short
# `bench train` at batch NCU_TRAIN_BATCH (default 64, where issue 5's 50x
# is not yet met; the graphed epochs replay the same kernels; 4 epochs of
# 2 steps in each of bench train's runs: graphed, not, unfolded, the fused
# step and its programmatic launches) timed alone by Nsight Compute, clocks left as
# they are and caches not flushed (--cache-control none): in a step each
# kernel finds its inputs in L2, where the previous one wrote them. Kernel
# times only: the gaps between kernels (launches, copies, host work) are the
# step's time less their sum. The autotuners' timing launches (each size's first launch in
# training tunes matmul/10 and the autotuned conv versions) pause the
# profiler (gpu_timing::ProfilerPaused), so only the workload's launches are
# counted. Nsight Compute honours the pauses only with --profile-from-start
# off; the program starts profiling at its GPU probe (device::gpu::probe).
# Without it, on 2026-12-04, the tuners' candidates were counted too
# (bench/results/logs/README.md).
ncu_csv="$OUT/ncu-lenet.csv"
ncu_batch=${NCU_TRAIN_BATCH:-64}
if want ncu && command -v ncu >/dev/null && [ -x "$BIN/warpnet" ]; then
  phase "ncu: each kernel of a LeNet-5 training step -> $ncu_csv"
  run_capped 90 ncu --profile-from-start off --clock-control none --cache-control none \
    --metrics gpu__time_duration.sum --csv --log-file "$ncu_csv" \
    "$BIN/warpnet" bench train --model lenet5 --batch "$ncu_batch" --images $((2 * ncu_batch)) --epoch-seconds 0 \
    --threads 2 >/dev/null 2>&1
  rc=$?
  note "ncu: $(outcome $rc)"
  [ -s "$ncu_csv" ] && python3 - "$ncu_csv" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "Metric Value" in r), None)
if head is None:
    print("ncu: no kernel rows in the CSV")
    sys.exit(0)
h = rows[head]
name, unit, value = h.index("Kernel Name"), h.index("Metric Unit"), h.index("Metric Value")
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}
total, count = collections.Counter(), collections.Counter()
for r in rows[head + 1:]:
    if len(r) <= value:
        continue
    us = float(r[value].replace(",", "")) * scale.get(r[unit], float("nan"))
    k = r[name].split("(")[0].replace("void ", "")[:70]
    total[k] += us
    count[k] += 1
launches = sum(count.values())
print(f"{launches} kernel launches, {sum(total.values()):.0f} us of kernel time in all "
      f"(bench train: 4 epochs x 2 steps, graphed and not, plus the CPU run which launches none)")
print(f"{'kernel':<70} {'launches':>8} {'mean us':>9} {'total us':>9}")
for k, t in total.most_common(25):
    print(f"{k:<70} {count[k]:>8} {t / count[k]:>9.1f} {t:>9.0f}")
PY
fi

# One launch of each matmul version in NCU_MATMUL_KERNELS at 4096^3, under
# every section Nsight Compute has (--set full: throughput against peak,
# the pipes' use, warp stall reasons, shared-memory bank conflicts,
# occupancy), raw metrics in one CSV per version; the log gets the few that
# say where a kernel's time goes. The bench around it runs cuBLAS and the
# version's check and warm-up; -k and -c pick the version's first launch
# at 4096^3: its checks at the op's test sizes come first but are not
# profiled (gpu::ProfilerPause). Before that pause, on 2026-12-04, the
# profiles were of a test size's launch of a few microseconds.
# A version's kernel, as Nsight Compute names a function (no template arguments).
kernel_regex() {
  case $1 in
    9 | 10) echo "^sgemm_warptiling$" ;;  # 10 launches 09's kernel with the tile its tuner picks
    11) echo "^gemm_wmma$" ;;
    12) echo "^gemm_mma_sync$" ;;
    13) echo "^gemm_wgmma_tma$" ;;
    16) echo "^gemm_wgmma_persistent$" ;;
    17) echo "^gemm_mma_sync_multistage$" ;;
    18) echo "^gemm_wgmma_fp8_persistent$" ;;
    19) echo "^gemm_mma_sync_tma$" ;;
    20) echo "^sgemm_tma$" ;;
    21) echo "^gemm_wgmma_cluster$" ;;
    22) echo "^gemm_wgmma_fp8_cluster$" ;;
    23) echo "^gemm_mma_sync_pipelined$" ;;
    24) echo "^gemm_mma_sync(_multistage|_pipelined)?$" ;;  # the candidate its tune picked: 12's, 17's or 23's kernel
    *) echo "unknown-version-$1" ;;
  esac
}
if want ncu-matmul && command -v ncu >/dev/null && [ -x "$BIN/warpnet" ]; then
  for v in ${NCU_MATMUL_KERNELS:-9 12 16 17 19 20 21 22 23 24}; do
    csv="$OUT/ncu-matmul-$v.csv"
    phase "ncu --set full: matmul/$v at 4096^3 -> $csv"
    run_capped 60 ncu --profile-from-start off --set full --csv --page raw --log-file "$csv" -c 1 \
      -k "regex:$(kernel_regex "$v")" \
      "$BIN/warpnet" bench matmul --size 4096,4096,4096 --kernels "$v" --no-cpu --runs 3 --budget 0.1 >/dev/null 2>&1
    note "ncu matmul/$v: $(outcome $?)"
    [ -s "$csv" ] && python3 - "$csv" <<'PY'
import csv, re, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace"))]
head = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
if head is None or len(rows) < head + 3:
    print("ncu: no kernel row in the CSV")
    sys.exit(0)
names, units, values = rows[head], rows[head + 1], rows[head + 2]
col = {n: i for i, n in enumerate(names)}
print("kernel:", values[col["Kernel Name"]][:110])
def show(metric):
    if metric in col:
        print(f"  {metric:<75} {values[col[metric]]:>12} {units[col[metric]]}")
for m in ["gpu__time_duration.sum", "launch__registers_per_thread", "launch__occupancy_limit_registers",
          "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
          "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
          "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "smsp__inst_executed.sum",
          "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"]:
    show(m)
# The tensor pipes' use (their names differ by architecture) and the stall reasons, largest first.
for m in sorted(n for n in col if re.search(r"pipe_tensor.*pct_of_peak", n)):
    show(m)
def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0
stalls = [(number(values[i]), n) for n, i in col.items()
          if re.fullmatch(r"smsp__average_warps_issue_stalled_\w+_per_issue_active\.ratio", n)]
for v, n in sorted(stalls, reverse=True)[:8]:
    print(f"  {n:<75} {v:>12.2f} warps per issue")
PY
  done
fi

# The launch configuration of every kernel a bf16 and an fp8 matmul bench
# launches at 8192^3, cuBLAS's and cuBLASLt's GEMMs above all: grid, block,
# registers, shared memory and cluster size as Nsight Compute's LaunchStats
# section gives them, to set beside v16/v18 and their clustered twins v21/v22
# (issue 4: what the vendor's kernels do that warpnet's do not). One cheap
# pass a launch, at most 40 launches.
vendor_csv="$OUT/ncu-vendor.csv"
if want ncu-vendor && command -v ncu >/dev/null && [ -x "$BIN/warpnet" ]; then
  phase "ncu --section LaunchStats: the launches of a bf16 and an fp8 bench at 8192^3 -> $vendor_csv"
  run_capped 90 ncu --profile-from-start off --section LaunchStats --csv --page details --log-file "$vendor_csv" \
    -c 40 "$BIN/warpnet" bench matmul --size 8192,8192,8192,0,1 --kernels 16,18 --no-cpu --runs 3 --budget 0.1 \
    >/dev/null 2>&1
  note "ncu-vendor: $(outcome $?)"
  [ -s "$vendor_csv" ] && python3 - "$vendor_csv" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "Metric Name" in r), None)
if head is None:
    print("ncu-vendor: no launch rows in the CSV")
    sys.exit(0)
h = rows[head]
col = {n: i for i, n in enumerate(h)}
launches = collections.OrderedDict()  # ID -> (name, block, grid, {metric: value})
for r in rows[head + 1:]:
    if len(r) < len(h):
        continue
    key = r[col["ID"]]
    name, block, grid, metrics = launches.setdefault(
        key, (r[col["Kernel Name"]], r[col.get("Block Size", 0)], r[col.get("Grid Size", 0)], {}))
    metrics[r[col["Metric Name"]]] = (r[col["Metric Value"]] + " " + r[col["Metric Unit"]]).strip()
seen = collections.Counter()
for name, block, grid, metrics in launches.values():
    seen[(name, block, grid)] += 1
    if seen[(name, block, grid)] > 1:
        continue
    print(f"{name[:140]}\n  block {block}, grid {grid}")
    for m, v in metrics.items():
        print(f"    {m:<45} {v}")
print(f"{len(launches)} launches, {len(seen)} distinct (kernel, block, grid)")
PY
fi

# LeNet-5's two conv layers at batch 256, the step issue 5's 50x target
# depends on: every conv, dgrad and wgrad version (the direct ones for few
# channels, the tuned GEMM tiles, the first ones) against cuDNN at those
# sizes, in a record of its own.
LENET_CONV_ARGS=${LENET_CONV_ARGS-"conv2d conv2d_dgrad conv2d_wgrad --size 256,1,28,28,6,5,5,1,2,1 --size 256,6,14,14,16,5,5,1,0,1"}
lenet_record="$OUT/lenet-conv-${record##*/}"
if want lenet && [ -x "$BIN/warpnet" ]; then
  phase "warpnet bench $LENET_CONV_ARGS -> $lenet_record"
  # shellcheck disable=SC2086
  run_capped 100 "$BIN/warpnet" bench $LENET_CONV_ARGS --budget 1 --timeout 15 --json "$lenet_record"
  note "bench lenet conv: $(outcome $? "1: a version failed")"
fi

BENCH_ARGS=${BENCH_ARGS-matmul conv2d_nhwc conv2d peak lenet5_step softmax}
if ! want bench; then
  :
elif [ -x "$BIN/warpnet" ]; then
  phase "warpnet bench ${BENCH_ARGS:-(every op)} -> $record"
  # shellcheck disable=SC2086
  run_capped 330 "$BIN/warpnet" bench ${BENCH_ARGS:-} --budget 1 --timeout 15 --json "$record"
  note "bench: $(outcome $? "1: a version failed, see the table")"
else
  note "bench: not run (no warpnet binary)"
fi
smi_after_bench=$(timeout -k 5 10 nvidia-smi --query-gpu=$smi_fields --format=csv 2>/dev/null) || smi_after_bench=""
echo "$smi_after_bench"

# Which matrix instructions each kernel's machine code holds (HGMMA/QGMMA:
# Hopper's wgmma, bf16/fp8; HMMA: mma.sync/WMMA; FFMA: CUDA cores) and any
# local-memory traffic (LDL/STL: registers spilled), and its shared loads
# (LDS) beside generic ones (LD: a load the compiler could not place in a
# memory space; from shared memory, slower than an LDS: matmul v20's
# tiles are read through pointers into dynamic shared memory). This machine
# has no disassembler; that one has cuobjdump.
sass="$OUT/sass-summary.txt"
if want sass && command -v cuobjdump >/dev/null && [ -x "$BIN/warpnet" ]; then
  phase "cuobjdump -sass: matrix instructions and spills per kernel -> $sass"
  run_capped 60 cuobjdump -sass "$BIN/warpnet" 2>/dev/null | awk '
    function flush() { if (name != "") printf "%6d HGMMA %6d QGMMA %6d HMMA %6d FFMA %4d LDL %4d STL %5d LDS %4d LD  %s\n", c["HGMMA"], c["QGMMA"], c["HMMA"], c["FFMA"], c["LDL"], c["STL"], c["LDS."], c["LD.E"], name; delete c }
    /Function : / { flush(); name = $3; next }
    { for (op in want) if (index($0, " " op)) c[op]++ }
    BEGIN { want["HGMMA"]; want["QGMMA"]; want["HMMA"]; want["FFMA"]; want["LDL"]; want["STL"]; want["LDS."]; want["LD.E"] }
    END { flush() }' | (command -v c++filt >/dev/null && c++filt || cat) >"$sass"
  note "sass: $(outcome "${PIPESTATUS[0]}")"
  echo "$(wc -l <"$sass") kernels; those with matrix instructions or spills:"
  awk '$1 + $3 + $5 > 0 || $9 + $11 > 0' "$sass" | cut -c1-200 | head -40
fi

phase "summary"
if command -v python3 >/dev/null; then
  python3 - "$record" "$train_record" "$lenet_record" <<'PY'
import json, os, sys
ops, rec = [], None
for path in sys.argv[1:]:
    if os.path.exists(path):
        rec = json.load(open(path))
        ops += rec["ops"]
if rec is None:
    print("no bench record")
    sys.exit(0)
g = rec.get("gpu", {})
print(f"{g.get('name', 'no GPU')}  driver {g.get('driver', '-')}  cuBLAS {g.get('cublas', '-')}  {rec['date']}")
def f(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"
for op in ops:
    if op["op"] == "train":
        rates = {w: op[w].get("images_per_second") for w in ("cpu", "gpu")}
        print(f"train {op['model']} batch {op['batch_size']}: cpu ({op['cpu'].get('threads')} threads) {f(rates['cpu'], '.0f')} img/s, "
              f"gpu {f(rates['gpu'], '.0f')} img/s, speed-up {f(op.get('gpu_speedup_over_cpu'), '.1f')}x, "
              f"graph over none {f(op.get('graph_speedup'), '.2f')}x, folded ReLU over not {f(op.get('fold_speedup'), '.2f')}x, "
              f"fused step {f(op.get('gpu_fused', {}).get('images_per_second'), '.0f')} img/s = {f(op.get('gpu_fused_speedup_over_cpu'), '.1f')}x")
        print(f"  fused step as programmatic launches {f(op.get('gpu_fused_programmatic', {}).get('images_per_second'), '.0f')} img/s = "
              f"{f(op.get('gpu_fused_programmatic_speedup_over_cpu'), '.1f')}x; launch floor {f(op.get('launch_floor', {}).get('graph_us'), '.1f')} us "
              f"a step in a graph")
        for w in ("gpu", "gpu_no_graph", "gpu_no_fold", "gpu_fused", "gpu_fused_programmatic", "launch_floor"):
            if "error" in op.get(w, {}):
                print(f"  {w} failed: {op[w]['error']}")
        continue
    if op["op"] == "matmul":  # M x N x K, and the layout when transposed
        size = "x".join(str(s) for s in op["sizes"][:3]) + ("" if not any(op["sizes"][3:]) else " T" + "".join(str(s) for s in op["sizes"][3:]))
    else:
        size = ",".join(str(s) for s in op["sizes"])
    print(f"{op['op']} {size}")
    for r in op["gpu"].get("kernels", []):
        t = (r.get("timing") or {}).get("median_ms")
        print(f"  {r['kernel']:<26} {r['input_format']:<5} {r['status']:<7} {f(t, '9.3f')} ms {f(r.get('tflops'), '7.1f')} TFLOP/s "
              f"{f(r.get('percent_of_vendor'), '6.1f')}% vendor {f(r.get('percent_of_peak'), '5.1f')}% peak "
              f"{f(r.get('percent_of_copy'), '5.1f')}% copy")
        if r.get("tuned"):
            print(f"    {r['tuned'][:160]}")
    if "skipped" in op["gpu"]:
        print(f"  GPU skipped: {op['gpu']['skipped']}")
    for r in op["cpu"].get("rows", []):
        print(f"  cpu {r['library']:<22} fp32  {'':7} {f(r['timing']['median_ms'], '9.3f')} ms")
PY
fi
if command -v python3 >/dev/null; then
  python3 - "$precision_record" "$tn_record" <<'PY'
import json, os, sys
for path, layout in zip(sys.argv[1:], ("", " (--trans-b)")):
    if not os.path.exists(path):
        continue
    rec = json.load(open(path))
    for name, target in (("fp8_over_bf16", 1.8), ("bf16_over_fp32", 10.0)):
        r = rec.get("ratios", {}).get(name)
        if r or not layout:
            print(f"precision {name}{layout}: " +
                  (f"{r['ratio']:.2f}x ({' / '.join(r['kernels'])}; target >= {target}x)" if r else "not measured"))
PY
  # Which sources each record's binaries came from (scripts/source-hash.sh).
  for f in "$OUT"/*.json; do
    [ -f "$f" ] || continue
    if python3 - "$f" "$source_here" "${built_from:-unknown}" "$smi_start" "$smi_after_bench" <<'PY'; then
import json, sys
path, here, built, smi_start, smi_after = sys.argv[1:]
rec = json.load(open(path))
# The bundle names the tree it started building from; the binary names the
# tree its build saw (rec["sources"], source-id.cmake). A file changed while
# the bundle was building makes the two differ: stale too.
binary = rec.get("sources", {}).get("hash", "unknown")
rec["source"] = {"tree": here, "binaries_built_from": built, "binary_built_from": binary,
                 "stale": built not in ("built here", here) or binary != here}
# nvidia-smi's CSV: a header line, then one line per GPU.
rec["nvidia_smi"] = {"at_script_start": smi_start.splitlines(), "after_last_bench": smi_after.splitlines()}
with open(path + ".tmp", "w") as out:
    json.dump(rec, out, indent=1)
PY
      mv "$f.tmp" "$f"
    else
      rm -f "$f.tmp"
      echo "could not label $f"
    fi
  done
fi
# At most 8 files come back: the records and this log stay, the rest goes
# into one archive.
logs=()
for f in "$OUT"/*; do
  case ${f##*/} in *.json | gpu-check.log | logs-*.tgz) ;; *) [ -f "$f" ] && logs+=("${f##*/}") ;; esac
done
if [ "${#logs[@]}" -gt 0 ]; then
  archive="logs-$gpu_slug-$date_utc${RECORD_TAG:+-$RECORD_TAG}.tgz"
  tar czf "$OUT/$archive" -C "$OUT" "${logs[@]}" && (cd "$OUT" && rm -f "${logs[@]}")
fi
printf '%s\n' "${status[@]}"
echo "elapsed: $(($(date +%s) - t0)) s; results in $OUT: $(ls "$OUT" | tr '\n' ' ')"
