#!/usr/bin/env bash
# LeNet-5 on Fashion-MNIST trained in each precision warpnet emulates:
# fp32, tf32, bf16, fp16, fp8 (`warpnet train --precision`, src/nn/README.md),
# the same seed, batch, optimizer and epochs, one run after the other. Prints
# each run's test accuracy, its difference from fp32 against the targets of
# issue 6 (bf16 within 0.5 points of fp32, fp8 within 1.5), fp16's loss
# scale and the memory by tag; with --record writes
# bench/results/cpu-lenet5-precision-<hostname>-<date>.json.
#
# The low precisions are emulated on the CPU (values rounded, kept in fp32
# words): these runs measure accuracy and memory, not speed.
#
# Usage: bench/lenet5_precision.sh [--epochs 5] [--threads 2] [--record] [--reports DIR]
#   --reports DIR  keep the per-run reports there
#                  (lenet5-<precision>-<epochs>ep-<threads>t.json) and reuse any
#                  already present instead of training again
#   WARPNET=path/to/warpnet   (default build/bin/warpnet)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
warpnet="${WARPNET:-build/bin/warpnet}"
epochs=5
threads=2
record=0
reports=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --epochs) epochs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --record) record=1; shift ;;
    --reports) reports="$(realpath -m "$2")"; shift 2 ;;  # before the cd below
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "lenet5_precision.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

die() { echo "lenet5_precision.sh: $*" >&2; exit 1; }

cd "$repo"
[[ -x "$warpnet" ]] || die "no warpnet binary at '$warpnet' (build it: cmake --build build --target warpnet, or set WARPNET=...)"
command -v python3 > /dev/null || die "python3 is needed to read the reports"
if [[ -z "$reports" ]]; then
  reports="$(mktemp -d /tmp/lenet5-precision.XXXXXX)"
  trap 'rm -rf "$reports"' EXIT
fi
mkdir -p "$reports"

# One run's command, as words: a path with spaces stays one word.
command_of() {
  cmd=("$warpnet" train --model lenet5 --epochs "$epochs" --batch-size 64 --optimizer adam --lr 0.001 --seed 1
       --threads "$threads" --precision "$1")
}
# A report's name holds the settings it was made with: one made with other
# --epochs or --threads is not reused for these.
report_of() { echo "$reports/lenet5-$1-${epochs}ep-${threads}t.json"; }
for p in fp32 tf32 bf16 fp16 fp8; do
  if [[ -s "$(report_of "$p")" ]]; then
    echo "== $p: reusing $(report_of "$p")" >&2
    continue
  fi
  command_of "$p"
  echo "== $p: ${cmd[*]}" >&2
  # OMP_WAIT_POLICY=passive: on a shared machine, waiting threads sleep
  # instead of spinning; it changes no arithmetic.
  OMP_WAIT_POLICY=passive "${cmd[@]}" --report "$(report_of "$p")" >&2 || die "the $p run failed"
done

out=""
if [[ $record -eq 1 ]]; then
  mkdir -p "$here/results"
  out="$here/results/cpu-lenet5-precision-$(hostname -s)-$(date -u +%Y-%m-%d).json"
fi
command_of '<precision>'
python3 - "$reports" "$out" "${cmd[*]}" "${epochs}ep-${threads}t" <<'PY'
import datetime, json, os, sys

reports, out, command, settings = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
names = ["fp32", "tf32", "bf16", "fp16", "fp8"]
runs = {p: json.load(open(os.path.join(reports, "lenet5-%s-%s.json" % (p, settings)))) for p in names}
targets = {"bf16": 0.5, "fp8": 1.5}  # points of test accuracy below fp32, at most
fp32 = 100 * runs["fp32"]["test_accuracy"]
mib = lambda b: b / 2**20
print("%-6s %9s %9s %8s  %9s %9s %9s %9s  %s" % ("prec", "test acc", "vs fp32", "target", "params", "activ.",
                                                 "grads", "optim", "notes"))
summary = {}
for p in names:
    r = runs[p]
    acc = 100 * r["test_accuracy"]
    m = r["peak_bytes_by_tag"]
    note = ""
    prec = r.get("precision", {})
    if "loss_scale" in prec:
        note = "loss scale %g, %d skipped" % (prec["loss_scale"]["final_scale"], prec["loss_scale"]["skipped_steps"])
    target = targets.get(p)
    met = None if target is None else (fp32 - acc) <= target
    print("%-6s %8.2f%% %+9.2f %8s  %8.3fM %8.3fM %8.3fM %8.3fM  %s" % (
        p, acc, acc - fp32, "" if target is None else ("<= %.1f %s" % (target, "met" if met else "MISSED")),
        mib(m["parameters"]), mib(m["activations"]), mib(m["gradients"]), mib(m["optimizer"]), note))
    summary[p] = {"test_accuracy": r["test_accuracy"],
                  "test_accuracy_by_epoch": [e["test_accuracy"] for e in r["epochs"]],
                  "points_vs_fp32": acc - fp32,
                  "target_points_below_fp32": target, "target_met": met,
                  "peak_bytes_by_tag": m, "precision": prec,
                  "train_images_per_second": r["train_images_per_second"]}
print("memory: peak MiB during training, low-precision tensors counted at their format's width (emulated)")
if out:
    rec = {"benchmark": "lenet5_fashion_mnist_precision_cpu",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "script": "bench/lenet5_precision.sh --record",
           "command": command,
           "note": "low precision emulated on the CPU by rounding with src/numeric: accuracy and memory, not speed",
           "machine": runs["fp32"].get("machine"),
           "epochs": len(runs["fp32"]["epochs"]),
           "summary": summary,
           "reports": runs}
    with open(out, "w") as f:
        json.dump(rec, f, indent=2)
        f.write("\n")
    print("wrote " + os.path.relpath(out))
PY
