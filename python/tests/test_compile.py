"""Regions, marks, steps, observe() and FastVideo's profiler_region inside
torch.compile(fullgraph=True): no graph break, the same spans and records as
eager code, and the spans around the compiled work."""

import glob
import gzip
import json
import os
import subprocess
from collections import Counter

import pytest

from conftest import clean_env, one_file, regiontrace_cli, run_python, trace_records

# The program each scenario compiles. `counts` prints what Dynamo did.
COMMON = """
import json, sys, torch, regiontrace
import torch._dynamo.utils as dynamo_utils

def counts():
    print("DYNAMO", json.dumps({
        "breaks": sum(dynamo_utils.counters["graph_break"].values()),
        "graphs": dynamo_utils.counters["stats"]["unique_graphs"],
        "recompiles": dynamo_utils.counters["recompiles"] if "recompiles" in dynamo_utils.counters
                      else 0}))

@regiontrace.region("decorated")
def decorated(y):
    return y * 3

def program(x, w, i):
    regiontrace.set_step(i)
    a = x @ w
    with regiontrace.region("inner"):
        y = torch.sin(a) + 1
        z = y @ w
        regiontrace.mark("inside")
    z = decorated(z)
    regiontrace.step()
    return torch.relu(z) @ w
"""


def dynamo(proc):
    line = [l for l in proc.stdout.splitlines() if l.startswith("DYNAMO ")]
    assert line, proc.stdout + proc.stderr
    return json.loads(line[-1][len("DYNAMO "):])


def encloses(outer, inner):
    return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]


def outermost(events):
    """The events no other of them encloses (aot_eager's dispatch mode records
    each op twice, one inside the other)."""
    events = list(events)
    return [e for e in events if not any(o is not e and encloses(o, e) for o in events)]


def timeline_events(tmp_path):
    with gzip.open(one_file(str(tmp_path / "timeline_*.json.gz"))) as f:
        trace = json.load(f)
    return [e for e in trace["traceEvents"] if e.get("ph") in ("X", "i", "I")]


def summary(events):
    return Counter((e["name"], e["ph"], e.get("args", {}).get("step")) for e in events)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_regions_marks_and_steps_compile_without_a_break(tmp_path, backend):
    code = COMMON + f"""
mode = {backend!r}
x, w = torch.randn(32, 32), torch.randn(32, 32)
run = program if mode == "none" else torch.compile(program, fullgraph=True, backend=mode)
for i in range(4):
    run(x, w, i)
counts()
print("STEP", regiontrace.current_step())
"""
    env = clean_env(REGIONTRACE_SINKS="timeline,region_stats", REGIONTRACE_OUTPUT_DIR=tmp_path)
    proc = run_python(code, env=env)
    assert dynamo(proc)["breaks"] == 0
    assert "STEP 4" in proc.stdout  # set_step(3), then step()
    compiled = summary(timeline_events(tmp_path))

    eager_dir = tmp_path / "eager"
    eager_dir.mkdir()
    env = clean_env(REGIONTRACE_SINKS="timeline,region_stats", REGIONTRACE_OUTPUT_DIR=eager_dir)
    run_python(code.replace(repr(backend), "'none'"), env=env)
    assert compiled == summary(timeline_events(eager_dir))
    assert compiled[("region::inner", "X", 3)] == 1
    assert compiled[("region::decorated", "X", 2)] == 1
    assert compiled[("inside", "i", 0)] == 1

    with open(one_file(str(tmp_path / "region_stats_*.json"))) as f:
        stats = {r["path"]: r["count"] for r in json.load(f)["regions"]}
    assert stats == {"inner": 4, "decorated": 4}


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_the_region_span_encloses_its_compiled_ops(tmp_path, backend):
    # Without the boundaries' inputs, inductor moved enter and exit next to
    # each other ahead of the matmul they enclose.
    code = COMMON + f"""
x, w = torch.randn(48, 48), torch.randn(48, 48)
run = torch.compile(program, fullgraph=True, backend={backend!r})
for i in range(3):
    run(x, w, i)
counts()
"""
    env = clean_env(REGIONTRACE_SINKS="torch_profiler", REGIONTRACE_OUTPUT_DIR=tmp_path,
                    REGIONTRACE_TORCH_PROFILER_REGIONS="inner")
    proc = run_python(code, env=env)
    assert dynamo(proc)["breaks"] == 0
    path = one_file(str(tmp_path / "torch_trace_*.pt.trace.json.gz"))
    with gzip.open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    spans = [e for e in events if e["name"].endswith("region::inner")]
    assert len(spans) == 3
    matmuls = outermost(e for e in events if e["name"] == "aten::mm")
    for span in spans:
        # The region holds one of the program's three matmuls.
        assert sum(encloses(span, mm) for mm in matmuls) == 1
    # Collection is on only inside the region: no other matmul is recorded.
    assert len(matmuls) == 3


MODEL = """
import sys, torch, regiontrace
torch.manual_seed(0)

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)
        self.norm = torch.nn.LayerNorm(32)
    def forward(self, x):
        h = self.norm(torch.nn.functional.gelu(self.lin(x))) + x
        return {"h": h, "aux": [x.mean(), h * 2]}

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(3)])
    def forward(self, x):
        for b in self.blocks:
            x = b(x)["h"]
        return x

model = Net().eval()
x = torch.randn(4, 32)
"""


@pytest.mark.parametrize("when", ["compile_first", "trace_first"])
def test_activation_records_of_a_compiled_model_diff_equal_to_eager(tmp_path, trace_env, when):
    code = COMMON + MODEL + f"""
mode = {when!r}
if mode == "compile_first":
    model = torch.compile(model, fullgraph=True)
handle = regiontrace.trace_modules(model, layers=r"blocks\\.\\d+$")
print("NAMES", handle.names)
if mode == "trace_first":
    model = torch.compile(model, fullgraph=True)
with torch.no_grad():
    for step in range(2):
        regiontrace.set_step(step)
        model(x)
counts()
"""
    compiled_dir = tmp_path / "compiled"
    eager_dir = tmp_path / "eager"
    for folder in (compiled_dir, eager_dir):
        folder.mkdir()
    env = dict(trace_env, REGIONTRACE_OUTPUT_DIR=str(compiled_dir))
    proc = run_python(code, env=env)
    assert dynamo(proc)["breaks"] == 0 and dynamo(proc)["graphs"] == 1
    assert "NAMES ['blocks.0', 'blocks.1', 'blocks.2']" in proc.stdout
    run_python(code.replace(repr(when), "'eager'").replace("torch.compile(model, fullgraph=True)",
                                                            "model"),
               env=dict(trace_env, REGIONTRACE_OUTPUT_DIR=str(eager_dir)))

    compiled, eager = trace_records(compiled_dir), trace_records(eager_dir)
    layout = [(r["module"], r["tensor"], r["step"], r["shape"], r["dtype"]) for r in compiled]
    assert layout == [(r["module"], r["tensor"], r["step"], r["shape"], r["dtype"]) for r in eager]
    assert len(compiled) == 2 * 3 * 3  # steps x blocks x (out.h, out.aux[0], out.aux[1])
    diff = subprocess.run([regiontrace_cli(), "diff", one_file(str(compiled_dir / "*.jsonl")),
                           one_file(str(eager_dir / "*.jsonl"))],
                          capture_output=True, text=True)
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "Result: EQUAL within tolerance" in diff.stdout
    assert "18 records matched, 0 divergent" in diff.stdout


def test_fastvideo_profiler_region_compiles(tmp_path):
    code = COMMON + f"""
import os
os.environ["FASTVIDEO_TORCH_PROFILER_DIR"] = {str(tmp_path)!r}
os.environ["FASTVIDEO_TORCH_PROFILE_REGIONS"] = "inference_denoising"
from regiontrace.fastvideo import get_or_create_profiler, profiler_region
get_or_create_profiler({str(tmp_path)!r})

def denoise(x):
    with profiler_region("profiler_region_inference_denoising"):
        y = torch.sin(x) @ x
    with profiler_region("model_loading"):  # registered, not selected
        y = y + 1
    return y

run = torch.compile(denoise, fullgraph=True)
x = torch.randn(32, 32)
for _ in range(3):
    run(x)
counts()
"""
    proc = run_python(code, env=clean_env())
    assert dynamo(proc) == {"breaks": 0, "graphs": 1, "recompiles": 0}, proc.stdout
    path = one_file(str(tmp_path / "*.pt.trace.json.gz"))
    with gzip.open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    names = Counter(e["name"] for e in events)
    assert names["fastvideo.region::profiler_region_inference_denoising"] == 3
    assert len(outermost(e for e in events if e["name"] == "aten::mm")) == 3
    assert not any("model_loading" in n for n in names)


def test_turning_sinks_on_and_off_does_not_recompile(tmp_path):
    code = COMMON + f"""
x, w = torch.randn(16, 16), torch.randn(16, 16)
run = torch.compile(program, fullgraph=True, backend="aot_eager")
run(x, w, 0)                      # nothing configured
regiontrace.init(sinks=["timeline"], output_dir={str(tmp_path)!r})
run(x, w, 0)                      # a sink runs
regiontrace.shutdown()
run(x, w, 0)                      # none again
counts()
"""
    proc = run_python(code, env=clean_env())
    assert dynamo(proc) == {"breaks": 0, "graphs": 1, "recompiles": 0}, proc.stdout
    events = summary(timeline_events(tmp_path))
    assert events[("region::inner", "X", 0)] == 1  # only the call while it ran


def test_a_graph_break_inside_a_region_runs_that_function_eagerly_with_right_spans(tmp_path):
    # Dynamo cannot resume inside a context manager it traced: it runs the
    # function eagerly (as for any such context manager); nothing raises and
    # the spans are the eager ones.
    code = """
import torch, regiontrace
def f(x):
    with regiontrace.region("outer"):
        y = torch.sin(x)
        print("a break", flush=True)
        with regiontrace.region("inner"):
            z = y * 2
    return z + 1
run = torch.compile(f)
x = torch.randn(8)
for _ in range(3):
    assert torch.allclose(run(x), f(x))
"""
    env = clean_env(REGIONTRACE_SINKS="timeline", REGIONTRACE_OUTPUT_DIR=tmp_path)
    run_python(code, env=env)
    events = summary(timeline_events(tmp_path))
    assert events[("region::outer", "X", None)] == 6
    assert events[("region::inner", "X", None)] == 6


def test_a_snapshot_in_compiled_code_is_taken_at_every_call(tmp_path):
    code = """
import torch, regiontrace
import torch._dynamo.utils as dynamo_utils
def f(x):
    y = torch.sin(x)
    regiontrace.snapshot("inside")
    return y * 2
run = torch.compile(f, fullgraph=True, backend="aot_eager")
x = torch.randn(8)
for _ in range(3):
    run(x)
print("BREAKS", sum(dynamo_utils.counters["graph_break"].values()))
"""
    env = clean_env(REGIONTRACE_SINKS="memory_snapshot", REGIONTRACE_OUTPUT_DIR=tmp_path)
    proc = run_python(code, env=env)
    assert "BREAKS 0" in proc.stdout
    with open(one_file(str(tmp_path / "memory_summary_*.json"))) as f:
        written = json.load(f)["snapshots"]["written"]
    assert [s["reason"] for s in written] == ["inside"] * 3


def test_dynamo_is_not_imported_by_regiontrace():
    proc = run_python("""
import sys, regiontrace
print("DYNAMO_LOADED", "torch._dynamo" in sys.modules)
import torch._dynamo
from regiontrace import _compile
print("INSTALLED", _compile._installed, _compile.unavailable)
""")
    assert "DYNAMO_LOADED False" in proc.stdout
    assert "INSTALLED True None" in proc.stdout, proc.stdout
