#!/usr/bin/python3
"""The same CNN as `speedup train`'s default, in PyTorch, on the same IDX data: first N
training examples, normalised by their mean and std, batch B, SGD with momentum and
weight decay, reshuffled each epoch. Prints one JSON line: examples_per_s over the
training steps only (the data is converted to a tensor once, before the clock starts,
which if anything favours PyTorch)."""
import argparse, gzip, json, struct, sys, time

import numpy as np
import torch
import torch.nn as nn


def read_idx(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    zero, dtype, nd = struct.unpack(">HBB", data[:4])
    assert zero == 0 and dtype == 8, f"{path}: not an unsigned-byte IDX file"
    dims = struct.unpack(">" + "I" * nd, data[4:4 + 4 * nd])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--limit", type=int, default=6000)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x = read_idx(f"{a.data}/train-images-idx3-ubyte.gz")[: a.limit].astype(np.float32) / 255.0
    y = read_idx(f"{a.data}/train-labels-idx1-ubyte.gz")[: a.limit].astype(np.int64)
    x = (x - x.mean()) / x.std()
    X = torch.from_numpy(x).unsqueeze(1).contiguous()  # (N, 1, 28, 28)
    Y = torch.from_numpy(y)
    net = nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10))
    opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)
    loss_fn = nn.CrossEntropyLoss()
    net.train()
    step_s, seen, loss_sum, steps = 0.0, 0, 0.0, 0
    for epoch in range(a.epochs):
        order = torch.randperm(a.limit)
        t0 = time.perf_counter()
        for s in range(0, a.limit, a.batch):
            idx = order[s:s + a.batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(X[idx]), Y[idx])
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            steps += 1
            seen += len(idx)
        step_s += time.perf_counter() - t0
    print(json.dumps({"impl": "pytorch", "torch": torch.__version__, "threads": a.threads,
                      "examples_per_s": seen / step_s, "train_loss": loss_sum / steps}))


if __name__ == "__main__":
    sys.exit(main())
