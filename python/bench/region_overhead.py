"""Disabled cost of `with regiontrace.region(...)` (the budget: no more than
a bare `with contextlib.nullcontext():` plus 100 ns).

    PYTHONPATH=build/python /usr/bin/python3 python/bench/region_overhead.py

Run with nothing configured (no REGIONTRACE_* / FASTVIDEO_* variables). Each
figure is the best of several timeit repeats, per statement, in ns; the
empty loop's cost is subtracted from each.
"""

import contextlib
import os
import sys
import timeit

for key in os.environ:
    if key.startswith(("REGIONTRACE_", "FASTVIDEO_")):
        sys.exit(f"unset {key}: this measures the disabled path")

import regiontrace  # noqa: E402

NUMBER = 1_000_000
REPEAT = 7

# Starts regiontrace once (nothing configured: all sinks off), as the first
# region of a real program does.
with regiontrace.region("warm_up"):
    pass
assert not regiontrace.enabled()


@regiontrace.region("decorated")
def decorated():
    pass


def plain():
    pass


cases = {
    "empty loop": "pass",
    "with nullcontext()": "with nullcontext():\n    pass",
    "with region(name)": "with region('inference_denoising'):\n    pass",
    "plain function call": "plain()",
    "@region function call": "decorated()",
}
env = {"nullcontext": contextlib.nullcontext, "region": regiontrace.region,
       "plain": plain, "decorated": decorated}
ns = {}
for name, stmt in cases.items():
    best = min(timeit.repeat(stmt, globals=env, number=NUMBER, repeat=REPEAT))
    ns[name] = best / NUMBER * 1e9
base = ns.pop("empty loop")
for name, value in ns.items():
    print(f"{name:24s} {value - base:7.1f} ns")
null = ns["with nullcontext()"] - base
reg = ns["with region(name)"] - base
print(f"region / nullcontext ratio: {reg / null:.2f}  (budget: region <= nullcontext + 100 ns: "
      f"{'met' if reg <= null + 100 else 'NOT met'}, margin {null + 100 - reg:.1f} ns)")
print(f"@region call - plain call: {ns['@region function call'] - ns['plain function call']:.1f} ns")
