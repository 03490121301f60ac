#!/usr/bin/env bash
# How steady is the loopback model? Runs `warpnet bench allreduce` on 2 ranks
# N times in a row and writes the last run's record, with every run's
# outcome (time, load average, sizes predicted within 25%, worst error) added
# under "repeats", so that a figure quoted from one run can be read against
# the others.
#   scripts/allreduce-repeats.sh [N] [RECORD]
#   N       runs, default 10 (about 17 s each on the 2-core CI VM)
#   RECORD  default bench/results/cpu-allreduce-2ranks-vm-<date>.json
# WARPNET  the binary, default build/bin/warpnet
# MACHINE  how the record names the machine (lesson 09 prints it), default
#          "the <N>-core machine <hostname> of <date>, L1 .., L2 .., L3 .."
#          (the data caches of cpu0, from sysfs: on a VM the host's name says
#          little, and the caches tell its machines apart)
set -euo pipefail
# A RECORD given relative to where the script was called from, before the cd.
[[ $# -ge 2 ]] && set -- "$1" "$(realpath -m "$2")"
cd "$(dirname "$0")/.."
runs=${1:-10}
record=${2:-bench/results/cpu-allreduce-2ranks-vm-$(date -u +%Y-%m-%d).json}
warpnet=${WARPNET:-build/bin/warpnet}
data_caches() {  # "L1 32K, L2 512K, L3 32768K"
  local d out=()
  for d in /sys/devices/system/cpu/cpu0/cache/index*; do
    [[ -r $d/type && $(<"$d/type") != Instruction ]] || continue
    out+=("L$(<"$d/level") $(<"$d/size")")
  done
  local IFS=,
  echo "${out[*]}" | sed 's/,/, /g'
}
caches=$(data_caches)
machine=${MACHINE:-the $(nproc)-core machine $(hostname) of $(date -u +%Y-%m-%d)${caches:+, $caches}}
[[ -x $warpnet ]] || { echo "$warpnet: not built (cmake --build build)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpirun: not found (apt install openmpi-bin)" >&2; exit 2; }
# Checked now, not after N runs of 17 s whose results the exit would then remove.
command -v python3 >/dev/null || { echo "python3: not found, which writes the record (apt install python3)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
as_root=()
[[ $(id -u) == 0 ]] && as_root=(--allow-run-as-root)
for i in $(seq 1 "$runs"); do
  cut -d' ' -f1 /proc/loadavg > "$work/load$i"
  mpirun --oversubscribe "${as_root[@]}" -np 2 "$warpnet" bench allreduce --json "$work/run$i.json" > "$work/run$i.log"
  echo "run $i of $runs: $(grep 'predicted from the pieces' "$work/run$i.log" | sed 's/^ *//')"
done
python3 - "$work" "$runs" "$record" "$machine" <<'PY'
import json, sys
work, runs, out, machine = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
records = [json.load(open(f"{work}/run{i}.json")) for i in range(1, runs + 1)]
last = records[-1]
last["machine"] = machine
last["repeats"] = [{"date": r["date"],
                    "load_average_1min_before": float(open(f"{work}/load{i + 1}").read()),
                    "within_25_percent": r["model"]["within_25_percent"],
                    "worst_error": r["model"]["worst_error"],
                    "errors": [row["predicted_error"] for row in r["rows"]],
                    # Each size predicted with its own pieces left out (None: no line without them).
                    "held_out_within_25_percent": r["model"].get("held_out_within_25_percent"),
                    "held_out_errors": [row.get("held_out_error") for row in r["rows"]]}
                   for i, r in enumerate(records)]
with open(out, "w") as f:
    json.dump(last, f, indent=1)
    f.write("\n")
within = [r["within_25_percent"] for r in last["repeats"]]
worst = max(r["worst_error"] for r in last["repeats"])
print(f"{out}: {runs} runs, within 25% at {min(within)} to {max(within)} of {len(last['rows'])} sizes, worst {worst:.0%}")
held = [r["held_out_within_25_percent"] for r in last["repeats"] if r["held_out_within_25_percent"] is not None]
if held:
    print(f"  each size predicted with its own pieces left out: within 25% at {min(held)} to {max(held)} "
          f"of {len(last['rows'])} sizes")
# Per size, the prediction's error over the runs (negative: predicted short):
# a size the model misses in the median is the model's; one it misses only
# now and then is the machine's noise.
def median(values):
    values = sorted(values)
    return (values[(len(values) - 1) // 2] + values[len(values) // 2]) / 2
print(f"{'bytes':>11} {'median':>8} {'min':>8} {'max':>8}  runs beyond 25% | left out: median, runs beyond 25%")
for k, row in enumerate(last["rows"]):
    errors = sorted(r["errors"][k] for r in last["repeats"])
    beyond = sum(abs(e) > 0.25 for e in errors)
    held_out = [r["held_out_errors"][k] for r in last["repeats"] if r["held_out_errors"][k] is not None]
    no_line = runs - len(held_out)
    held_text = (f"{median(held_out):>+8.1%} {sum(abs(e) > 0.25 for e in held_out) + no_line}" if held_out
                 else "no line")
    print(f"{int(row['bytes']):>11} {median(errors):>+8.1%} {errors[0]:>+8.1%} {errors[-1]:>+8.1%}  {beyond:>15} | "
          f"{held_text}")
PY
