#!/usr/bin/env bash
# LeNet-5 on Fashion-MNIST, one epoch on the CPU: warpnet against PyTorch.
#
# Runs `warpnet train --model lenet5` and bench/lenet_pytorch.py with the same
# model, batch size (64), optimizer (Adam, lr 1e-3), seed and thread count,
# one after the other, then prints both and the ratio
#   warpnet images/s / PyTorch images/s   (1.0 = parity, 0.5 = half as fast).
# With --record it also writes bench/results/cpu-lenet-<hostname>-<date>.json.
#
# Usage: bench/lenet_vs_pytorch.sh [--threads N] [--record]
#   WARPNET=path/to/warpnet   (default build/bin/warpnet)
#   PYTHON=path/to/python3    (default /usr/bin/python3, where Debian's python3-torch lives)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
warpnet="${WARPNET:-build/bin/warpnet}"
python="${PYTHON:-/usr/bin/python3}"
threads=2
record=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --record) record=1; shift ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "lenet_vs_pytorch.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

die() { echo "lenet_vs_pytorch.sh: $*" >&2; exit 1; }

# Preconditions, checked before anything is timed.
cd "$repo"
[[ -x "$python" ]] || die "$python not found; install it: apt-get install python3-torch"
"$python" -c 'import torch' 2>/dev/null \
  || die "PyTorch is missing for $python; install it: apt-get install python3-torch"
[[ -x "$warpnet" ]] || die "no warpnet binary at '$warpnet' (build it: cmake --build build --target warpnet, or set WARPNET=...)"

tmp="$(mktemp -d /tmp/lenet-vs-pytorch.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

echo "== warpnet ($warpnet, $threads threads)" >&2
"$warpnet" train --model lenet5 --epochs 1 --batch-size 64 --threads "$threads" \
  --optimizer adam --lr 0.001 --seed 1 --report "$tmp/warpnet.json" >&2 \
  || die "warpnet train failed"
[[ -s "$tmp/warpnet.json" ]] || die "warpnet train wrote no report at $tmp/warpnet.json"

echo "== pytorch ($python, $threads threads)" >&2
"$python" "$here/lenet_pytorch.py" --threads "$threads" --seed 1 > "$tmp/pytorch.out" \
  || die "bench/lenet_pytorch.py failed"
tail -n 1 "$tmp/pytorch.out" > "$tmp/pytorch.json"

# Table, ratio and the optional record: python is already required, so it parses the JSON.
out=""
if [[ $record -eq 1 ]]; then
  mkdir -p "$here/results"
  out="$here/results/cpu-lenet-$(hostname -s)-$(date -u +%Y-%m-%d).json"
fi
"$python" - "$tmp/warpnet.json" "$tmp/pytorch.json" "$threads" "$out" <<'PY'
import datetime, json, os, platform, sys

w = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
threads, out = int(sys.argv[3]), sys.argv[4]

w_epoch = w["epoch_seconds"][0] if isinstance(w["epoch_seconds"], list) else w["epoch_seconds"]
rows = [("warpnet", w_epoch, w["train_images_per_second"], w["test_accuracy"]),
        ("pytorch " + p["torch_version"], p["epoch_seconds"], p["train_images_per_second"],
         p["test_accuracy"])]
print("%-20s %10s %12s %10s" % ("framework", "epoch s", "images/s", "test acc"))
for name, sec, ips, acc in rows:
    print("%-20s %10.2f %12.0f %10.4f" % (name, sec, ips, acc))
ratio = w["train_images_per_second"] / p["train_images_per_second"]
print("ratio warpnet/pytorch (train images/s) = %.3f" % ratio)

if out:
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    rec = {
        "benchmark": "lenet5_fashion_mnist_one_epoch_cpu",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hostname": platform.node(),
        "cpu_model": cpu,
        "hardware_threads": os.cpu_count(),
        "threads": threads,
        "batch_size": 64,
        "ratio_warpnet_over_pytorch_images_per_second": ratio,
        "warpnet": w,
        "pytorch": p,
    }
    with open(out, "w") as f:
        json.dump(rec, f, indent=2)
        f.write("\n")
    print("wrote " + os.path.relpath(out))
PY
