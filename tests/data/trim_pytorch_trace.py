#!/usr/bin/python3
"""How tests/data/pytorch-ddp-k2.rank{0,1}.json were made from a real trace: PyTorch 1.13
(Debian python3-torch, no Kineto: the legacy profiler's array of "X" events) recorded by
experiments/pytorch-ddp/ddp_train.py --workers 2 --batch 16 --steps 3. To keep them small,
events nested two deep or more in a thread (the operators inside an operator inside a
top-level event) are dropped; nothing else changes, in the file's own order. What
chrome_import reads — the top-level events of each thread and what directly holds a
collective — is all kept.

    trim_pytorch_trace.py IN.json OUT.json
"""
import json
import sys


def trim(events):
    by_thread = sorted(range(len(events)), key=lambda i: (str(events[i]["tid"]), events[i]["ts"], -events[i]["dur"]))
    ends, keep = {}, set()
    for i in by_thread:
        e = events[i]
        stack = ends.setdefault(str(e["tid"]), [])
        while stack and stack[-1] <= e["ts"]:
            stack.pop()
        if len(stack) <= 1:
            keep.add(i)
        stack.append(e["ts"] + e["dur"])
    return [e for i, e in enumerate(events) if i in keep]


if __name__ == "__main__":
    events = json.load(open(sys.argv[1]))
    with open(sys.argv[2], "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(e) for e in trim(events)) + "\n]\n")
