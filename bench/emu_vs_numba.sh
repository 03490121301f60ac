#!/usr/bin/env bash
# The emulator against Numba's CUDA simulator, in one run on one machine: the
# same naive SGEMM (kernels/matmul/01_naive.cu) at 128^3, block (16,16). Prints
# both times and the ratio (issue 3's target: the emulator >= 200x faster),
# then the emulator's other figures (__syncthreads ns/thread, tiled vs loop).
#
# With --record it also writes bench/results/emu-<hostname>-<date>.json.
#
# Usage: bench/emu_vs_numba.sh [--workers N] [--record]
#   BENCH=path/to/bench_emu_sgemm  (default build/bin/bench_emu_sgemm)
#   PYTHON=path/to/python3         (default /usr/bin/python3, where Debian's python3-numba lives)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="${BENCH:-build/bin/bench_emu_sgemm}"
python="${PYTHON:-/usr/bin/python3}"
workers=1
record=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --record) record=1; shift ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "emu_vs_numba.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$bench" ]] || { echo "emu_vs_numba.sh: $bench not built (cmake --build build --target bench_emu_sgemm)" >&2; exit 2; }
"$python" -c "import numba" 2>/dev/null || { echo "emu_vs_numba.sh: $python has no numba (apt-get install python3-numba)" >&2; exit 2; }

emu_json="$("$bench" --workers "$workers" | tail -n 1)"
numba_json="$(NUMBA_ENABLE_CUDASIM=1 "$python" "$here/emu_numba_sgemm.py" 128 | tail -n 1)"

record_path=""
if [[ $record -eq 1 ]]; then
  mkdir -p "$here/results"
  record_path="$here/results/emu-$(hostname)-$(date -u +%Y-%m-%d).json"
fi

"$python" - "$emu_json" "$numba_json" "$record_path" <<'PY'
import datetime, json, platform, socket, sys
emu, numba = json.loads(sys.argv[1]), json.loads(sys.argv[2])
e, n = emu["naive_sgemm_128_ms"], numba["numba_cudasim_naive_sgemm_ms"]
print(f"naive SGEMM 128^3: emulator {e:.2f} ms, Numba CUDA simulator {n:.0f} ms -> emulator {n / e:.0f}x faster (target >= 200x)")
print(f"__syncthreads, 1024-thread blocks: {emu['syncthreads_ns_per_thread']:.1f} ns per thread (target <= 50)")
print(f"tiled SGEMM 256^3 / scalar loop: {emu['tiled_over_scalar']:.1f}x (target within 30x)")
if sys.argv[3]:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
    record = {"benchmark": "emulator", "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
              "hostname": socket.gethostname(), "cpu_model": cpu, "emulator": emu, "numba": numba,
              "ratio_numba_over_emulator_naive_sgemm_128": n / e}
    with open(sys.argv[3], "w") as f:
        json.dump(record, f, indent=2)
    print("wrote", sys.argv[3])
PY
