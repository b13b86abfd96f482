"""GPU check item: regions inside torch.compile'd code on CUDA.

    PYTHONPATH=build-gpu/python python3 scripts/gpu_check_compiled.py OUT_DIR

A region around a matmul in a function compiled with inductor, in the
default mode and in mode="reduce-overhead" (CUDA graphs, which inductor
partitions at operators that do not run on the GPU): each mode is called
CALLS times and must leave CALLS region spans in the timeline trace, with
no graph break. Prints one JSON line of figures; exits 1 on a failure.
"""

import glob
import gzip
import json
import os
import statistics
import sys

import torch
import torch._dynamo.utils as dynamo_utils

import regiontrace

CALLS = 20
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
regiontrace.init(sinks=["timeline"], output_dir=out)


def block(x, w):
    y = torch.relu(x @ w)
    with regiontrace.region("compiled_block"):
        y = torch.nn.functional.gelu(y @ w) + y
    return y @ w


x = torch.randn(1024, 1024, device="cuda")
w = torch.randn(1024, 1024, device="cuda")
failures = []
for mode in ("default", "reduce-overhead"):
    compiled = torch.compile(block, fullgraph=True, mode=mode)
    for _ in range(CALLS):
        compiled(x, w)
    torch.cuda.synchronize()
breaks = sum(dynamo_utils.counters["graph_break"].values())
regiontrace.shutdown()

with gzip.open(glob.glob(os.path.join(out, "timeline_*.json.gz"))[0]) as f:
    spans = [e for e in json.load(f)["traceEvents"]
             if e.get("ph") == "X" and e["name"] == "region::compiled_block"]
figures = {"spans": len(spans), "expected": 2 * CALLS, "graph_breaks": breaks,
           "median_us": statistics.median(e["dur"] for e in spans) if spans else None}
print(json.dumps(figures))
if breaks:
    failures.append(f"{breaks} graph breaks")
if len(spans) != 2 * CALLS:
    failures.append(f"{len(spans)} region spans, expected {2 * CALLS} (one per call and mode)")
if failures:
    sys.exit("compiled regions on CUDA: " + "; ".join(failures))
