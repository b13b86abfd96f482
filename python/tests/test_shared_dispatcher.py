"""C++ code loaded into the Python process shares regiontrace with Python:
one configuration, one step, one region stack per thread, one set of sinks."""

import os

from conftest import run_python, trace_records


def test_cxx_and_python_regions_on_one_stack(tmp_path, trace_env):
    # Only records whose region path runs Python -> C++ -> Python are kept.
    env = dict(trace_env, REGIONTRACE_ACTIVATION_TRACE_LAYERS="^py_outer/cxx_inner$")
    proc = run_python("""
import ctypes, os, torch, regiontrace
lib = ctypes.CDLL(os.environ["RT_TEST_CXX_LIB"])
lib.rt_test_cxx_step.restype = ctypes.c_int64
lib.rt_test_cxx_set_step.argtypes = [ctypes.c_int64]
CALLBACK = ctypes.CFUNCTYPE(None)

@CALLBACK
def inside_cxx():
    regiontrace.observe("from_python_inside_cxx", torch.full((3,), 2.0))

with regiontrace.region("py_outer"):
    assert lib.rt_test_cxx_enabled() == 1          # the sinks Python's config started
    regiontrace.set_step(4)
    assert lib.rt_test_cxx_step() == 4             # Python's step, seen from C++
    lib.rt_test_cxx_region(b"cxx_inner", inside_cxx)
    lib.rt_test_cxx_set_step(9)
    assert regiontrace.current_step() == 9         # C++'s step, seen from Python
    lib.rt_test_cxx_region(b"cxx_inner", inside_cxx)
    regiontrace.observe("outside_cxx", torch.ones(1))   # path py_outer: filtered out
regiontrace.shutdown()
assert lib.rt_test_cxx_enabled() == 0
print("ok")
""", env=env)
    assert proc.stdout.strip() == "ok"
    records = trace_records(tmp_path)
    assert [(r["module"], r["tensor"], r["step"], r["sum"]) for r in records] == [
        ("cxx_inner", "from_python_inside_cxx", 4, 6.0),
        ("cxx_inner", "from_python_inside_cxx", 9, 6.0)]
