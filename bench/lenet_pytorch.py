#!/usr/bin/python3
"""LeNet-5 on Fashion-MNIST, one epoch, in PyTorch: the reference that
bench/lenet_vs_pytorch.sh sets `warpnet train --model lenet5` against.

Same model, data, batch size, optimizer and thread count as the warpnet run:

  x: (B,1,28,28) in [0,1]
  conv 1->6 5x5 pad 2 -> ReLU -> maxpool 2x2     (B,6,14,14)
  conv 6->16 5x5      -> ReLU -> maxpool 2x2     (B,16,5,5)
  flatten (B,400) -> linear 120 -> ReLU -> linear 84 -> ReLU -> linear 10
  softmax cross-entropy, Adam lr 1e-3, batch 64, shuffled with a fixed seed.

Only the training loop is timed; the images are already float tensors by then.
Test accuracy is measured after the epoch, untimed. The last line of stdout is
one JSON record; the lines before it are for people.

Debian's python3-torch lives under /usr/bin/python3 (not the pyenv python3 on
PATH), hence the shebang. Run:
  /usr/bin/python3 bench/lenet_pytorch.py --threads 2
"""
import argparse
import gzip
import json
import os
import struct
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("lenet_pytorch.py: PyTorch is missing for %s; install it: apt-get install python3-torch"
             % sys.executable)

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file (gzip or plain) as (dims, raw bytes). Magic: 0,0,dtype,ndim; dims big-endian."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise ValueError("%s: not an unsigned-byte IDX file" % path)
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def load_split(data_dir, prefix):
    """images: (N,1,28,28) float32 in [0,1]; labels: (N,) int64."""
    def find(stem):
        for name in (stem + ".gz", stem):
            if os.path.exists(os.path.join(data_dir, name)):
                return os.path.join(data_dir, name)
        sys.exit("lenet_pytorch.py: %s not found in %s" % (stem, data_dir))
    idims, ibytes = read_idx(find(prefix + "-images-idx3-ubyte"))
    ldims, lbytes = read_idx(find(prefix + "-labels-idx1-ubyte"))
    n, rows, cols = idims
    assert ldims == (n,), "image and label counts differ"
    images = torch.frombuffer(bytearray(ibytes), dtype=torch.uint8).reshape(n, 1, rows, cols)
    labels = torch.frombuffer(bytearray(lbytes), dtype=torch.uint8).to(torch.int64)
    return images.to(torch.float32).div_(255.0), labels


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):                                # x: (B,1,28,28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)       # (B,6,14,14)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)       # (B,16,5,5)
        x = torch.flatten(x, 1)                          # (B,400)
        x = F.relu(self.fc1(x))                          # (B,120)
        x = F.relu(self.fc2(x))                          # (B,84)
        return self.fc3(x)                               # (B,10) logits


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=DEFAULT_DATA, help="folder with the Fashion-MNIST IDX files")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train_x, train_y = load_split(args.data, "train")
    test_x, test_y = load_split(args.data, "t10k")
    # Standardize with the training set's mean and deviation, as warpnet does.
    mean, std = train_x.mean(), train_x.std(unbiased=False)
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
    n = train_x.shape[0]
    print("pytorch %s, %d threads, seed %d, %d train / %d test images"
          % (torch.__version__, args.threads, args.seed, n, test_x.shape[0]), file=sys.stderr)

    model = LeNet5()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(args.seed))

    # Timed: one epoch of forward, loss, backward, Adam step. The last batch
    # may be short (60000 = 937*64 + 32), as in warpnet.
    model.train()
    t0 = time.perf_counter()
    for start in range(0, n, args.batch_size):
        idx = order[start:start + args.batch_size]
        loss = F.cross_entropy(model(train_x[idx]), train_y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    epoch_seconds = time.perf_counter() - t0

    # Untimed: test accuracy after the epoch.
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, test_x.shape[0], 1000):
            logits = model(test_x[start:start + 1000])
            correct += (logits.argmax(1) == test_y[start:start + 1000]).sum().item()
    test_accuracy = correct / test_x.shape[0]

    print("epoch %.2f s, %.0f images/s, last loss %.4f, test accuracy %.4f"
          % (epoch_seconds, n / epoch_seconds, loss.item(), test_accuracy), file=sys.stderr)
    print(json.dumps({
        "framework": "pytorch",
        "torch_version": torch.__version__,
        "threads": args.threads,
        "batch_size": args.batch_size,
        "epoch_seconds": epoch_seconds,
        "train_images_per_second": n / epoch_seconds,
        "test_accuracy": test_accuracy,
    }))


if __name__ == "__main__":
    main()
