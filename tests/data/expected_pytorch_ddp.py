#!/usr/bin/python3
"""An independent reading of tests/data/pytorch-ddp-k2.rank{0,1}.json, written apart from
model/chrome_import.c from its documented rules, for the constants of
tests/test_chrome_import.c: per rank, the seconds of each phase on the main thread (each
placed top-level event owns the time from the end of the one before it; what follows the
last is the last one's; an event is nested in another when it starts before that one ends,
or at its very end and lasts at most a microsecond past it: whole-microsecond rounding), the steps (runs of compute), the seconds of communication beside
it (gloo's threads), each step's overlap share, and each step's all-reduce span (the
smallest over the ranks of the union of that rank's background all-reduces of the step:
with no barrier before it, the first rank's union holds its wait for the last rank).

    expected_pytorch_ddp.py tests/data/pytorch-ddp-k2.rank0.json tests/data/pytorch-ddp-k2.rank1.json
"""
import fnmatch
import json
import statistics
import sys

# The rules these files need, from the built-in map (model/phasemap.c), in its order.
RULES = [("startup*", "startup"), ("Optimizer.step#*", "update"), ("Optimizer.zero_grad#*", "compute"),
         ("DistributedDataParallel.forward", "compute"), ("autograd::engine::evaluate_function: *", "compute"),
         ("torch::autograd::*", "compute"), ("torch.distributed.ddp.reducer::*", "comm"), ("c10d::*", "comm"),
         ("gloo:*", "comm"), ("aten::*", "-"), ("detach", "-")]


def phase(name):
    for pattern, ph in RULES:
        if fnmatch.fnmatchcase(name, pattern):
            return ph
    raise SystemExit(f"no rule for {name}")


def placed(events):
    """The outermost events with a phase, by thread, looking inside "-" ones."""
    out = {}
    for tid in {e["tid"] for e in events}:
        mine = sorted((e for e in events if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
        open_ends = []  # (end, is_placed)
        for e in mine:
            # Nested: it starts before the open event ends, or (whole microseconds, start
            # and duration rounded apart) at its end and lasts at most a microsecond past it.
            while open_ends and not (e["ts"] < open_ends[-1][0] or
                                     (e["ts"] == open_ends[-1][0] and e["ts"] + e["dur"] <= open_ends[-1][0] + 1)):
                open_ends.pop()
            if open_ends and open_ends[-1][1]:
                continue
            ph = phase(e["name"])
            if ph != "-":
                out.setdefault(tid, []).append((e["ts"], e["ts"] + e["dur"], ph, e["name"]))
            open_ends.append((e["ts"] + e["dur"], ph != "-"))
    return out


def read(path):
    events = json.load(open(path))
    spans = placed(events)
    main = max(spans, key=lambda t: sum(b - a for a, b, p, _ in spans[t] if p == "compute"))
    first = min(e["ts"] for e in events if e["tid"] == main)
    last = max(e["ts"] + e["dur"] for e in events if e["tid"] == main)
    totals, prev, steps, step_spans = {}, first, 0, []
    seq = sorted(spans[main])
    for i, (a, b, ph, _) in enumerate(seq):
        end = last if i == len(seq) - 1 else b
        totals[ph] = totals.get(ph, 0) + end - prev
        if ph == "compute" and (i == 0 or seq[i - 1][2] != "compute"):
            steps += 1
            step_spans.append([prev, end])
        elif ph == "compute":
            step_spans[-1][1] = end
        prev = end
    beside = [(a, b, n) for t in spans if t != main for a, b, p, n in spans[t] if p == "comm"]
    return {"totals": totals, "steps": steps, "step_spans": step_spans, "beside": beside, "first": first}


runs = [read(p) for p in sys.argv[1:]]
origin = min(r["first"] for r in runs)
shares, syncs = [], {}
for rank, r in enumerate(runs):
    t = r["totals"]
    print(f"rank {rank}: startup {t.get('startup', 0) / 1e6:.6f} compute {t.get('compute', 0) / 1e6:.6f} "
          f"update {t.get('update', 0) / 1e6:.6f} comm {t.get('comm', 0) / 1e6:.6f} s; steps {r['steps']}; "
          f"beside {sum(b - a for a, b, n in r['beside']) / 1e6:.6f} s; wall {(sum(t.values())) / 1e6:.6f} s")
    for k, (s0, s1) in enumerate(r["step_spans"]):
        mine = [(a, b) for a, b, n in r["beside"] if "all_reduce" in n and
                max([j for j, sp in enumerate(r["step_spans"]) if sp[0] <= a] or [-1]) == k]
        if mine:
            shares.append(min(1, max(0, (s1 - min(a for a, b in mine)) / (s1 - s0))))
            mine.sort()
            union, lo, hi = 0, *mine[0]
            for a, b in mine[1:]:
                if a > hi:
                    union, lo, hi = union + hi - lo, a, b
                hi = max(hi, b)
            syncs.setdefault(k, []).append(union + hi - lo)
print(f"overlap shares {[round(s, 6) for s in shares]}; median {statistics.median(shares):.6f}")
print("all-reduce spans by step: " + ", ".join(f"{k}: {min(v) / 1e6:.6f} s" for k, v in sorted(syncs.items())))
