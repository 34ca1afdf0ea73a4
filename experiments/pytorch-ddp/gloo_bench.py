#!/usr/bin/python3
"""The communication micro-benchmark of `speedup commbench`, for gloo: K ranks all-reduce
(sum) float tensors of several sizes, each after a barrier, REPS times per size after a
warm-up; every rank times its own call. Writes a speedup trace (model/trace.h) with
net "commbench", so that `speedup calibrate --from-traces` takes it as a benchmark: one
comm event per rank and repetition named "allreduce" with its bytes. This is what lets
the fit tell gloo's latency from its bandwidth (alpha, beta) when the training runs
themselves only ever all-reduce one model's gradients at K = 2.

    gloo_bench.py --workers 2 --out DIR/gloo.trace.jsonl [--sizes 4096,...] [--reps 20]
"""
import argparse
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def bench(rank, a, sizes):
    torch.set_num_threads(1)
    store = dist.TCPStore("127.0.0.1", a.port, is_master=False)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=a.workers)
    t_start = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process of the host
    events = []
    for size in sizes:
        x = torch.ones(size // 4)
        for rep in range(a.warmup + a.reps):
            dist.barrier()
            t0 = time.monotonic()
            dist.all_reduce(x)
            t1 = time.monotonic()
            if rep >= a.warmup:
                events.append({"rank": rank, "ph": "comm", "t0": t0, "t1": t1, "epoch": 0,
                               "step": len(events), "bytes": size, "examples": 0, "name": "allreduce"})
    starts = [None] * a.workers
    dist.all_gather_object(starts, t_start)
    parts = [None] * a.workers
    dist.all_gather_object(parts, events)
    if rank == 0:
        zero = min(starts)
        run = {"format": "speedup-trace", "version": 1, "host": socket.gethostname(),
               "host_cores": os.cpu_count(), "git": "unknown", "net": "commbench",
               "model_bytes": max(sizes), "workers": a.workers, "cores": 1, "sync": "batch",
               "topology": "allreduce", "master": "worker", "examples": 1, "batch": 1, "epochs": 1,
               "batch_per_worker": False, "seed": 0}
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps({"run": run}) + "\n")
            for part in parts:
                for e in part:
                    e["t0"] -= zero
                    e["t1"] -= zero
                    f.write(json.dumps(e) + "\n")
        os.replace(tmp, a.out)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="4096,65536,262144,1048576,1819688,4194304",
                    help="bytes, comma-separated (rounded down to whole floats)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--port", type=int, default=29541)
    a = ap.parse_args()
    sizes = [int(s) // 4 * 4 for s in a.sizes.split(",")]
    if a.workers < 2 or any(s < 4 for s in sizes) or a.reps < 1:
        ap.error("need workers >= 2, sizes >= 4 bytes, reps >= 1")
    # The launcher hosts the rendezvous store, as ddp_train.py's does: listening before any
    # rank connects, no rank draws PyTorch 1.13's fixed 1 s sleep on a refused connect.
    store = dist.TCPStore("127.0.0.1", a.port, is_master=True, wait_for_workers=False)
    mp.spawn(bench, args=(a, sizes), nprocs=a.workers, join=True)
    del store


if __name__ == "__main__":
    sys.exit(main())
