#!/usr/bin/python3
"""The default CNN of `speedup train` in PyTorch, trained data-parallel with
DistributedDataParallel on the gloo backend (CPU), every rank profiled with torch.profiler;
each rank writes its Chrome trace as PREFIX.rankR.json, which `speedup calibrate
--from-traces` and `speedup trace` read (model/chrome_import.h).

    ddp_train.py --workers K --threads T --batch B --steps N --out PREFIX

The job is an ordinary DDP script: nothing in it is there for speedup except that the
start-up is wrapped in record_function("startup: ...") blocks, which the default phase map
reads as start-up (without them a trace simply has no start-up). The network is
conv5x5x32,relu,pool2,conv5x5x64,relu,pool2,fc128,relu,dropout0.5,fc10 ("same" padding),
SGD with momentum 0.9 and weight decay 5e-4 (PyTorch's convention, as the C trainer), the
first N*B Fashion-MNIST training images (IDX files, gzipped or not) normalised by their
mean and standard deviation. B is the global batch: every step it is split over the K
ranks in slices that differ by at most one example (the C trainer's batch sync); DDP sums
and averages the gradients. K = 1 runs the plain model, no DDP: the job on one worker.
Every rank loads the data itself, as the C trainer's ranks do.
"""
import argparse
import gzip
import os
import struct
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function


def read_idx(path, n):
    """The first n records of an unsigned-byte IDX file (gzipped or not), as a numpy array."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        zero, dtype, nd = struct.unpack(">HBB", f.read(4))
        if zero != 0 or dtype != 8:
            raise SystemExit(f"{path}: not an unsigned-byte IDX file")
        dims = list(struct.unpack(">" + "I" * nd, f.read(4 * nd)))
        if dims[0] < n:
            raise SystemExit(f"{path}: {dims[0]} records, {n} needed")
        dims[0] = n
        data = f.read(int(np.prod(dims)))
    return np.frombuffer(data, dtype=np.uint8).reshape(dims)


def build_net():
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10))


def slice_of(batch, workers, rank):
    """This rank's [lo, hi) of a global batch: slices differ by at most one example."""
    base, extra = divmod(batch, workers)
    lo = rank * base + min(rank, extra)
    return lo, lo + base + (1 if rank < extra else 0)


def train(rank, a):
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(a.seed)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("startup: init_process_group"):
            if a.workers > 1:
                store = dist.TCPStore("127.0.0.1", a.port, is_master=False)
                dist.init_process_group("gloo", store=store, rank=rank, world_size=a.workers)
        with record_function("startup: data_load"):
            n = a.steps * a.batch
            x = read_idx(f"{a.data}/train-images-idx3-ubyte", n).astype(np.float32) / 255.0
            y = read_idx(f"{a.data}/train-labels-idx1-ubyte", n).astype(np.int64)
            x = (x - x.mean()) / x.std()
            X = torch.from_numpy(x).unsqueeze(1).contiguous()  # (N, 1, 28, 28)
            Y = torch.from_numpy(y)
            order = torch.randperm(n, generator=torch.Generator().manual_seed(a.seed))
        with record_function("startup: model_build"):
            net = build_net()
            model = nn.parallel.DistributedDataParallel(net) if a.workers > 1 else net
            opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)
            loss_fn = nn.CrossEntropyLoss()
        model.train()
        lo, hi = slice_of(a.batch, a.workers, rank)
        for s in range(a.steps):
            idx = order[s * a.batch + lo: s * a.batch + hi]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(X[idx]), Y[idx])
            loss.backward()
            opt.step()
    prof.export_chrome_trace(f"{a.out}.rank{rank}.json")
    if a.workers > 1:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=1, help="K ranks")
    ap.add_argument("--threads", type=int, default=1, help="T intra-op threads per rank")
    ap.add_argument("--batch", type=int, default=48, help="global batch B, split over the ranks")
    ap.add_argument("--steps", type=int, default=300, help="training steps N (N*B examples)")
    ap.add_argument("--out", required=True, help="trace prefix: PREFIX.rankR.json")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=29531)
    a = ap.parse_args()
    if a.workers < 1 or a.threads < 1 or a.steps < 1 or a.batch < a.workers:
        ap.error("need workers >= 1, threads >= 1, steps >= 1 and batch >= workers")
    if a.workers == 1:
        train(0, a)
        return
    # The launcher hosts the rendezvous store, as torchrun's agent does, so that it listens
    # before any rank connects: PyTorch 1.13's TCPStore client sleeps a fixed second when
    # its connect is refused (pytorch/pytorch#129261 made that a backoff in 2.4), and with
    # rank 0 hosting the store (init_method tcp://) 1 in 2 runs at K >= 2 drew that second.
    store = dist.TCPStore("127.0.0.1", a.port, is_master=True, wait_for_workers=False)
    mp.spawn(train, args=(a,), nprocs=a.workers, join=True)
    del store


if __name__ == "__main__":
    sys.exit(main())
