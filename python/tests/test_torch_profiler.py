"""The torch_profiler sink in a Python process: selected regions gate the
collection of ops Python issues, with the sink's spans and markers."""

import glob
import gzip
import json

from conftest import clean_env, run_python


def test_selected_region_gates_python_ops(tmp_path):
    env = clean_env(REGIONTRACE_SINKS="torch_profiler", REGIONTRACE_OUTPUT_DIR=tmp_path,
                    REGIONTRACE_TORCH_PROFILER_REGIONS="hot*")
    run_python("""
import torch, regiontrace
a = torch.randn(64, 64)
with regiontrace.region("cold"):
    torch.cumsum(a, 0)
with regiontrace.region("hot"):
    for _ in range(3):
        torch.mm(a, a)
torch.cumsum(a, 0)
with regiontrace.region("hot"):
    torch.mm(a, a)
""", env=env)
    # The op summaries are in summaries/: the folder holds the traces alone.
    traces = glob.glob(str(tmp_path / "torch_trace_*.json*"))
    assert len(traces) == 1, sorted(p.name for p in tmp_path.iterdir())
    assert ".summary." not in traces[0], traces
    opener = gzip.open if traces[0].endswith(".gz") else open
    with opener(traces[0], "rt") as f:
        events = json.load(f)["traceEvents"]
    names = [e.get("name", "") for e in events]
    assert names.count("aten::mm") == 4, sorted(set(names))
    assert "aten::cumsum" not in names
    spans = [e for e in events if e.get("name") == "regiontrace.region::hot"]
    assert len(spans) == 2
    assert names.count("regiontrace.profiler.enable_collection") == 2
    assert names.count("regiontrace.profiler.disable_collection") == 2
    # every mm lies inside a hot span
    for e in events:
        if e.get("name") == "aten::mm":
            assert any(s["ts"] <= e["ts"] and e["ts"] + e.get("dur", 0) <= s["ts"] + s["dur"]
                       for s in spans), e


def test_each_collection_window_is_said_as_it_opens_and_closes(tmp_path):
    # A schedule of two cycles: skip step 0, warm up in 1, record 2, twice.
    env = clean_env(REGIONTRACE_SINKS="torch_profiler", REGIONTRACE_OUTPUT_DIR=tmp_path,
                    REGIONTRACE_TORCH_PROFILER_REGIONS="hot",
                    REGIONTRACE_TORCH_PROFILER_SKIP_FIRST="1",
                    REGIONTRACE_TORCH_PROFILER_WAIT="0",
                    REGIONTRACE_TORCH_PROFILER_WARMUP="1",
                    REGIONTRACE_TORCH_PROFILER_ACTIVE="1",
                    REGIONTRACE_TORCH_PROFILER_REPEAT="2")
    proc = run_python("""
import torch, regiontrace
a = torch.randn(16, 16)
for step in range(6):
    regiontrace.set_step(step)
    with regiontrace.region("hot"):
        torch.mm(a, a)
""", env=env)
    said = [line.split("info: ", 1)[1] for line in proc.stderr.splitlines()
            if "collection window" in line]
    opened = [line for line in said if " opened" in line]
    closed = [line for line in said if " closed" in line]
    assert opened == ["collection window 1 opened at step 1 (warmup: the profiler runs, "
                      "nothing is kept)", "collection window 2 opened at step 2",
                      "collection window 3 opened at step 3 (warmup: the profiler runs, "
                      "nothing is kept)", "collection window 4 opened at step 4"], said
    assert len(closed) == 4, said
    assert closed[1].startswith("collection window 2 closed (its steps ended) after "), said
    assert closed[1].endswith(" ms; writing its trace"), said
    assert len(glob.glob(str(tmp_path / "torch_trace_*.json*"))) == 2


def test_a_python_torch_profiler_makes_the_sink_stand_aside_once(tmp_path):
    """The application's own torch.profiler.profile (libtorch 2.15) owns the
    profiler: the sink says so once, writes no trace, and the application's
    profile has its ops."""
    env = clean_env(REGIONTRACE_SINKS="torch_profiler", REGIONTRACE_OUTPUT_DIR=tmp_path,
                    REGIONTRACE_TORCH_PROFILER_REGIONS="hot")
    proc = run_python("""
import torch, regiontrace
from torch.profiler import profile, ProfilerActivity
a = torch.randn(32, 32)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(3):
        with regiontrace.region("hot"):
            torch.mm(a, a)
regiontrace.shutdown()
mm = [e for e in prof.events() if e.name == "aten::mm"]
print("app_mm", len(mm))
""", env=env)
    assert "app_mm 3" in proc.stdout, proc.stdout + proc.stderr
    said = proc.stderr.count("runs the torch profiler itself")
    assert said == 1, proc.stderr
    assert not glob.glob(str(tmp_path / "torch_trace_*.json*")), sorted(p.name for p in tmp_path.iterdir())


def _error_lines(stderr):
    """Kineto's and ours: "ERROR: text" and glog's "ERROR:<date> <pid>:<tid> file:line] text",
    as the text alone (dates, pids and threads differ between runs)."""
    lines = set()
    for line in stderr.splitlines():
        if "ERROR" not in line:
            continue
        lines.add(line.split("] ", 1)[1] if "] " in line else line.split("(", 1)[0].strip())
    return lines


def test_a_healthy_run_prints_no_error_line_a_bare_profiler_run_does_not(tmp_path):
    """The sink runs the profiler on a thread of its own; Kineto, first
    initialised there, used to print "ERROR: External init callback must run
    in same thread as registerClient" in every process. A healthy run prints
    no ERROR line that torch.profiler on the same machine does not print too
    (without a GPU Kineto's own "gpuGetDeviceCount failed" is in both)."""
    work = """
import torch
a = torch.randn(32, 32)
"""
    bare = run_python(work + """
from torch.profiler import profile
with profile() as prof:
    for _ in range(3):
        torch.mm(a, a)
""", env=clean_env())
    ours = run_python(work + """
import regiontrace
for step in range(3):
    regiontrace.set_step(step)
    with regiontrace.region("inference_denoising"):
        torch.mm(a, a)
regiontrace.shutdown()
""", env=clean_env(REGIONTRACE_SINKS="torch_profiler", REGIONTRACE_OUTPUT_DIR=tmp_path,
                   REGIONTRACE_TORCH_PROFILER_REGIONS="inference_denoising"))
    assert glob.glob(str(tmp_path / "torch_trace_*.pt.trace.json.gz")), ours.stderr
    assert not any("registerClient" in line for line in ours.stderr.splitlines()), ours.stderr
    assert _error_lines(ours.stderr) <= _error_lines(bare.stderr), (ours.stderr, bare.stderr)
