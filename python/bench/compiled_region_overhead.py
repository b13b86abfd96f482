"""Cost of a region inside torch.compile'd code, nothing configured.

    PYTHONPATH=build/python python3 python/bench/compiled_region_overhead.py

A compiled function with a region, against the same function without one,
both compiled with fullgraph=True (inductor, and aot_eager), alternated
rounds, best of each; and one call of a boundary operator through
torch.library.Library against the same operator through custom_op (why
_compile.py defines them as it does). Each figure is us per call.
"""

import os
import sys
import timeit

for key in os.environ:
    if key.startswith(("REGIONTRACE_", "FASTVIDEO_")):
        sys.exit(f"unset {key}: this measures the disabled path")

import torch  # noqa: E402

import regiontrace  # noqa: E402

NUMBER = 20_000
REPEAT = 7


def plain(x):
    return torch.sin(x) + 1


def with_region(x):
    with regiontrace.region("inference_denoising"):
        y = torch.sin(x) + 1
    return y


def best(fn):
    return min(timeit.repeat(fn, number=NUMBER, repeat=1)) / NUMBER * 1e6


x = torch.randn(16)
with regiontrace.region("warm_up"):  # starts regiontrace: nothing configured
    pass
assert not regiontrace.enabled()
for backend in ("inductor", "aot_eager"):
    a = torch.compile(plain, fullgraph=True, backend=backend)
    b = torch.compile(with_region, fullgraph=True, backend=backend)
    a(x), b(x)
    ta, tb = [], []
    for _ in range(REPEAT):  # alternated: drift hits both alike
        ta.append(best(lambda: a(x)))
        tb.append(best(lambda: b(x)))
    print(f"{backend:10s} without region {min(ta):6.2f} us   with region {min(tb):6.2f} us   "
          f"region {min(tb) - min(ta):5.2f} us (two boundary operators)")



@torch.library.custom_op("regiontrace_bench::enter", mutates_args=())
def custom(name: str, before: list[torch.Tensor]) -> None:
    regiontrace._regiontrace._compiled_enter(name)
    regiontrace._regiontrace._compiled_exit()


custom.register_fake(lambda name, before: None)
enter = torch.ops.regiontrace.region_enter.default
leave = torch.ops.regiontrace.region_exit.default
custom_op = torch.ops.regiontrace_bench.enter.default
t_lib = min(best(lambda: (enter("r", []), leave("r", []))) for _ in range(REPEAT)) / 2
t_custom = min(best(lambda: custom_op("r", [])) for _ in range(REPEAT))  # enter+exit in one
print(f"one boundary call, eager: Library {t_lib:.2f} us, custom_op {t_custom:.2f} us "
      f"(ratio {t_lib / t_custom:.2f})")
